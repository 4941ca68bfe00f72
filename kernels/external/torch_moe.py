"""A torch implementation of the kernel contract (docs/numerics.md "The rounding points of the kernel contract"), as
a Python kernel object for moe_harness: case.run(TorchMoe()) or the pytest plugin (docs/python.md).

Every scheme of the case schema: bf16 / fp16 weights, fp8 e4m3 fn / fnuz per tensor, per channel and 128x128
blocks, MXFP8 and MXFP4 weights with their E8M0 scales (ocp or triton edges); activations unquantized, fp8 per token
or 1x128 (qmax, amax floor, power-of-two scales) or MXFP8 (floor / rceil / even); silu, gelu_tanh, gelu_erf and
swiglu_oai in every layout, biases, the router weight on the output or the input, EP, shared experts (fused or on a
separate path), intermediate and output dtypes. The slots are sorted by expert into blocks of BLOCK (as fused MoE
kernels sort them) and each expert's blocks run as one GEMM pair, in fp32, on the weights dequantized from the
fixture. Element codes are decoded by tables written here from the format definitions (docs/numerics.md "Element
formats"), not by the harness's codecs.

On a device (TorchMoe(device="cuda")) the layer runs with no data-dependent shape and no host sync, so that a CUDA
graph can capture a call (the harness's graph_replay probe, docs/python.md "Device probes"): every local expert on
every token, its rows kept where the token routes a slot to it, constant tables made on the device once; on the CPU
the slots go through the expert-sorted blocks (TorchMoe(capturable=...) picks either).

Injectable defects (TorchMoe(bug=NAME) or MOE_TORCH_BUG=NAME), each a bug fused MoE kernels have shipped:
  swiglu_layout        gate/up split with the other layout: interleaved rows read as chunked, chunked as interleaved
  router_weight_twice  the router weight applied twice (on the output twice, or on the input and the output)
  drop_last_block      the last block of the sorted slots never computed
  fp8_scale_ignored    fp8 per-tensor weight scales not applied
"""
import contextlib
import math
import os

import torch

from moe_harness.torch import to_torch

BUGS = ("swiglu_layout", "router_weight_twice", "drop_last_block", "fp8_scale_ignored")
BLOCK = 16  # slots per block of the expert-sorted order


_POW2 = {}
_ON_DEVICE = {}


def _on(table, key, device):
    """A constant table on `device`, copied there once (a copy from host memory inside a CUDA graph capture is
    refused; the first call of a case, eager, makes it)."""
    k = (key, str(device))
    if k not in _ON_DEVICE:
        _ON_DEVICE[k] = table.to(device)
    return _ON_DEVICE[k]


def _repeat_each(x, n, dim):
    """x with each element repeated n times along dim: repeat_interleave's values, without the host sync its
    output size costs on a device."""
    y = x.unsqueeze(dim + 1)
    expand = list(y.shape)
    expand[dim + 1] = n
    shape = list(x.shape)
    shape[dim] *= n
    return y.expand(expand).reshape(shape)


def _pow2(e):
    """2^e as fp32 for integer tensors e (exact: a table, subnormals included)."""
    if e.device not in _POW2:
        _POW2[e.device] = torch.tensor([math.ldexp(1.0, i) for i in range(-149, 128)], dtype=torch.float32,
                                       device=e.device)
    return _POW2[e.device][(e.clamp(-149, 127) + 149).long()]


def _e4m3_table(fnuz):
    """Value of each e4m3 code: fn bias 7 (0x7F, 0xFF NaN), fnuz bias 8 (0x80 the only NaN, no -0)."""
    bias, out = (8 if fnuz else 7), []
    for code in range(256):
        s, e, m = code >> 7, (code >> 3) & 15, code & 7
        v = math.ldexp(m / 8, 1 - bias) if e == 0 else math.ldexp(1 + m / 8, e - bias)
        out.append(-v if s else v)
    if fnuz:
        out[0x80] = math.nan
    else:
        out[0x7F] = out[0xFF] = math.nan
    return torch.tensor(out, dtype=torch.float32)


_E4M3 = {"e4m3fn": _e4m3_table(False), "e4m3fnuz": _e4m3_table(True)}
_E2M1 = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=torch.float32)


def _e8m0_table(edges):
    """2^(code - 127); code 0x00 is 2^-127 (ocp) or 0 (triton), 0xFF NaN (ocp) or +Inf (triton)."""
    t = [math.ldexp(1.0, c - 127) for c in range(256)]
    t[0xFF] = math.nan if edges == "ocp" else math.inf
    if edges == "triton":
        t[0] = 0.0
    return torch.tensor(t, dtype=torch.float32)


_E8M0 = {edges: _e8m0_table(edges) for edges in ("ocp", "triton")}


def _e8m0(edges, device):
    return _on(_E8M0[edges], "e8m0_" + edges, device)


class DeviceFixture:
    """The fixture's tensors as torch tensors on `device`, each converted once per kernel call: the layer reads
    every expert's slice of w13 and w2, and converting the whole tensor for each expert would copy it E times to a
    GPU. `name in fx`, fx[name] (a _Converted), fx.spec as on the fixture."""

    def __init__(self, fx, device):
        self._fx, self._device, self._cache = fx, device, {}
        self.spec = fx.spec

    def __contains__(self, name):
        return name in self._fx

    def __getitem__(self, name):
        if name not in self._cache:
            t = self._fx[name]
            self._cache[name] = _Converted(t.format, to_torch(t, self._device))
        return self._cache[name]


class _Converted:
    def __init__(self, fmt, tensor):
        self.format, self.tensor = fmt, tensor


def _to(t, device):
    """A fixture tensor (or a DeviceFixture's conversion of one) as a torch tensor on device."""
    return t.tensor if isinstance(t, _Converted) else to_torch(t, device)


def _codes(t, device):
    x = _to(t, device)
    return x if x.dtype == torch.uint8 else x.view(torch.uint8)


def _float(t, device, index=None):
    """t (or its slice [index], taken before the conversion: a slice of a converted whole tensor would keep the
    whole fp32 copy alive, one per expert) in fp32."""
    x = _to(t, device)
    if index is not None:
        x = x[index]
    return x.view(torch.bfloat16).float() if t.format == "bf16" and x.dtype == torch.int16 else x.float()


def _round_to(x, dtype):
    """Stored in a case dtype and read back (round to nearest even)."""
    if dtype == "bf16":
        return x.to(torch.bfloat16).float()
    if dtype == "f16":
        return x.half().float()
    return x


# --- quantizers (docs/numerics.md "Quantizers") ---

def _e4m3_round(v, fnuz):
    """v rounded to the e4m3 grid, ties to even, saturating at the max finite; NaN stays NaN."""
    a = v.abs()
    _, e = torch.frexp(a)
    q = _pow2((e - 1).clamp(min=-7 if fnuz else -6) - 3)
    r = torch.clamp(torch.round(a / q) * q, max=240.0 if fnuz else 448.0)  # NaN stays NaN
    return torch.copysign(r, v)


def _blocks(x, block):
    n, k = x.shape
    nb = -(-k // block)
    return torch.nn.functional.pad(x, (0, nb * block - k)).view(n, nb, block), nb


def _div(x, c):
    """x / c, correctly rounded, for a Python float c: on a CUDA device torch divides by a scalar as a multiply by its
    reciprocal (not correctly rounded), which moves a scale such as amax / 448 by an ulp; a bf16 x divided by it often
    lands exactly on an e4m3 rounding tie, so the codes would leave the contract's quantizer (docs/numerics.md
    "Quantizers": s = amax / qmax) on thousands of elements (results/runs/2026-12-06-h200-capturable/RUN.md)."""
    return x / torch.full_like(x, c)


def _fake_fp8(x, block, q):
    """dequant(quant(x)) by 1 x block groups along K: s = max(amax, floor) / qmax (pow2: rounded up to 2^n), codes
    e4m3(clamp(x / s, +-qmax)), values code * s."""
    fnuz = q["flavor"] == "fnuz"
    qmax = float(q["qmax"] or (240.0 if fnuz else 448.0))
    xb, nb = _blocks(torch.where(torch.isnan(x), torch.zeros_like(x), x.abs()), block)
    s = _div(torch.clamp(xb.amax(-1), min=float(q["amax_floor"])), qmax)
    if q["scale_pow2"]:
        m, e = torch.frexp(s)
        s = torch.where(m == 0.5, s, _pow2(e))
    s = _repeat_each(s, block, 1)[:, : x.shape[1]]
    v = x / s
    return _e4m3_round(torch.clamp(v, -qmax, qmax), fnuz) * s  # NaN passes the clamp


def _mx_exponent(amax, mode):
    """The shared exponent of 32-blocks for e4m3 elements (emax 8, max 448)."""
    _, e = torch.frexp(amax)
    if mode == "floor":
        x = (e - 1) - 8
    elif mode == "rceil":
        m, e = torch.frexp(_div(amax, 448.0))
        x = torch.where(m == 0.5, e - 1, e)
    else:  # even: amax's fp32 bits + 2^(22 - 3), masked to sign and exponent, then floor
        bits = (amax.view(torch.int32) + (1 << 19)) & -0x800000
        rounded = bits.view(torch.float32)
        _, er = torch.frexp(rounded)
        x = torch.where(torch.isinf(rounded), torch.full_like(er, 128 - 8), (er - 1) - 8)
    x = torch.where(torch.isinf(amax), torch.full_like(x, 127), x)
    return torch.where(amax > 0, x, torch.full_like(x, -127)).clamp(-127, 127)


def _fake_mxfp8(x, q):
    xb, nb = _blocks(x, 32)
    nan = torch.isnan(xb).any(-1)
    amax = torch.where(torch.isnan(xb), torch.zeros_like(xb), xb.abs()).amax(-1)
    se = _mx_exponent(amax, q["mx_mode"])
    scale = _e8m0(q["e8m0_edges"], x.device)[(torch.where(nan, torch.full_like(se, 128), se) + 127).long()]
    v = xb * _pow2(-se).unsqueeze(-1)
    return (_e4m3_round(v, False) * scale.unsqueeze(-1)).view(x.shape[0], -1)[:, : x.shape[1]]


def fake_quantize(x, q):
    """The activation format of scheme q on rows x [n, K] (docs/numerics.md "Activation quantization")."""
    if q["act"] == "none" or x.shape[0] == 0:
        return x
    if q["act"] == "mxfp8":
        return _fake_mxfp8(x, q)
    return _fake_fp8(x, x.shape[1] if q["act"] == "fp8_token" else 128, q)


# --- weights ---

def _scaled(w, s, rows, cols, gate_up_halves):
    """fp8 codes' values times 128x128 block scales; w13's gate and up halves are blocked separately."""
    if gate_up_halves:
        half, sb = rows // 2, s.shape[0] // 2
        return torch.cat([_scaled(w[:half], s[:sb], half, cols, False), _scaled(w[half:], s[sb:], half, cols, False)])
    full = _repeat_each(_repeat_each(s, 128, 0)[:rows], 128, 1)[:, :cols]
    return w * full


def dequantize(fx, prefix, name, e, q, device, bug):
    """Expert e's weight matrix `name` (w13 [2I, H] or w2 [H, I]) in fp32."""
    t = fx[prefix + name]
    fmt = q["weight"]
    if fmt in ("bf16", "fp16"):
        return _float(t, device, e)
    codes = _codes(t, device)[e].long()
    if fmt == "mxfp4":
        lo, hi = codes & 15, codes >> 4
        codes = torch.stack([lo, hi], -1).view(codes.shape[0], -1)  # the even element in the low nibble
        vals = _on(_E2M1, "e2m1", device)[codes]
    else:
        vals = _on(_E4M3[t.format], t.format, device)[codes]
    s = fx[prefix + name + "_scale"]
    if fmt in ("mxfp8", "mxfp4"):
        scale = _e8m0(q["e8m0_edges"], device)[_codes(s, device)[e].long()]
        return vals * _repeat_each(scale, 32, 1)
    scale = _float(s, device, e)
    if fmt == "fp8_tensor":
        return vals if bug == "fp8_scale_ignored" else vals * scale
    if fmt == "fp8_channel":
        return vals * scale.unsqueeze(1)
    return _scaled(vals, scale, vals.shape[0], vals.shape[1], name == "w13")


# --- the expert and the layer ---

def _gate_up(h, layout, bug):
    if bug == "swiglu_layout":
        layout = "gate_up" if layout == "interleaved" else "interleaved"
    inter = h.shape[1] // 2
    if layout == "gate_up":
        return h[:, :inter], h[:, inter:]
    if layout == "up_gate":
        return h[:, inter:], h[:, :inter]
    return h[:, 0::2], h[:, 1::2]


def _activation(g, u, act, clamp):
    kind = act["kind"]
    if kind == "silu":
        return g * torch.sigmoid(g) * u
    if kind == "gelu_tanh":
        return 0.5 * g * (1 + torch.tanh(math.sqrt(2 / math.pi) * (g + 0.044715 * g * g * g))) * u
    if kind == "gelu_erf":
        return 0.5 * g * (1 + torch.erf(g / math.sqrt(2))) * u
    alpha = torch.tensor(act["swiglu_alpha"], dtype=torch.float32)
    limit = torch.tensor(act["swiglu_limit"], dtype=torch.float32)
    if clamp:
        g, u = torch.minimum(g, limit), torch.maximum(torch.minimum(u, limit), -limit)
    return (u + 1) * g * torch.sigmoid(alpha * g)


def expert(a, fx, prefix, e, q, spec, clamp, device, bug):
    """a [n, H] (already quantized) -> [n, H]: stage 1 (+bias), activation, intermediate rounding and quantization,
    stage 2 (+bias), in fp32."""
    h = a @ dequantize(fx, prefix, "w13", e, q, device, bug).T
    if prefix + "w13_bias" in fx:
        h = h + _to(fx[prefix + "w13_bias"], device)[e]
    g, u = _gate_up(h, spec["activation"]["layout"], bug)
    z = fake_quantize(_round_to(_activation(g, u, spec["activation"], clamp), spec["dtypes"]["intermediate"]), q)
    y = z @ dequantize(fx, prefix, "w2", e, q, device, bug).T
    if prefix + "w2_bias" in fx:
        y = y + _to(fx[prefix + "w2_bias"], device)[e]
    return y


def sorted_blocks(ids, first, local, bug):
    """The local slots (token * k + j) sorted by expert, each expert's padded to whole blocks of BLOCK, as
    [(local expert, slots)] per block; drop_last_block loses the last one."""
    flat = ids.reshape(-1).long() - first
    blocks = []
    for e in range(local):
        slots = torch.nonzero(flat == e).flatten()
        blocks += [(e, slots[i:i + BLOCK]) for i in range(0, len(slots), BLOCK)]
    return blocks[:-1] if bug == "drop_last_block" else blocks


def _last_block(hits):
    """Of hits [local, T, k] (slot (t, j) routed to local expert e), the slots the expert-sorted order's last block
    holds, with no host sync: the last expert with a slot, its slots from rank BLOCK * ((count - 1) // BLOCK) on
    (sorted_blocks' last block)."""
    local = hits.shape[0]
    flat = hits.reshape(local, -1)
    counts = flat.sum(1)
    rank = flat.long().cumsum(1) - 1
    idx = torch.arange(local, device=hits.device)
    last = torch.where(counts > 0, idx, torch.full_like(idx, -1)).max()
    start = BLOCK * torch.div(counts - 1, BLOCK, rounding_mode="floor")
    return (flat & (idx == last).unsqueeze(1) & (rank >= start.unsqueeze(1))).view_as(hits)


def routed_by_expert(x, xq, ids, w, fx, spec, device, bug, slot):
    """The routed sum, capturable: each local expert on every token (the weight of the token's slot routed to it, 0
    where none), its rows kept by torch.where where the token has such a slot, so a poisoned row of a token without
    one never reaches the sum; the experts added in ascending order, as the sorted blocks add them."""
    shape, q = spec["shape"], spec["quant"]
    on_input = spec["routing"]["router_weight_on"] == "input"
    hits = torch.stack([ids.long() - shape["first_local_expert"] == e for e in range(shape["local_experts"])])
    if bug == "drop_last_block":
        hits = hits & ~_last_block(hits)
    routed = torch.zeros_like(x)
    for e in range(shape["local_experts"]):
        weight = torch.where(hits[e], w, torch.zeros_like(w)).sum(1, keepdim=True)  # one slot at most per expert
        if on_input:
            y = expert(fake_quantize(_round_to(x * weight, spec["dtypes"]["input"]), q), fx, "", e, q, spec, True,
                       device, bug)
        else:
            y = expert(xq, fx, "", e, q, spec, True, device, bug) * weight
        if bug == "router_weight_twice":
            y = y * weight
        routed = routed + torch.where(hits[e].any(1, keepdim=True), _round_to(y, slot), torch.zeros_like(y))
    return routed


def moe_forward(fx, spec, device="cpu", bug=None, slot=None, capturable=False):
    """The layer's output [T, H] in fp32 before the output rounding, and the routed and shared sums apart. `slot`
    (None or a case dtype) rounds each slot's weighted down-projection before the top-k sum (the contract's slot
    point); `capturable` computes the routed sum by routed_by_expert (no host sync) instead of the sorted blocks."""
    shape, routing = spec["shape"], spec["routing"]
    x = _float(fx["x"], device)
    ids, w = _to(fx["topk_ids"], device), _to(fx["topk_weights"], device)
    tokens, k = ids.shape
    on_input = routing["router_weight_on"] == "input"
    q, in_dtype = spec["quant"], spec["dtypes"]["input"]
    xq = None if on_input else fake_quantize(x, q)  # once per token and scheme
    if capturable:
        return routed_by_expert(x, xq, ids, w, fx, spec, device, bug, slot), shared_forward(fx, spec, x, device, bug,
                                                                                             slot)
    routed = torch.zeros_like(x)
    for e, slots in sorted_blocks(ids, shape["first_local_expert"], shape["local_experts"], bug):
        tok, weight = torch.div(slots, k, rounding_mode="floor"), w.reshape(-1)[slots].unsqueeze(1)
        if on_input:
            a = fake_quantize(_round_to(x[tok] * weight, in_dtype), q)
            y = expert(a, fx, "", e, q, spec, True, device, bug)
            if bug == "router_weight_twice":
                y = y * weight
        else:
            y = expert(xq[tok], fx, "", e, q, spec, True, device, bug) * weight
            if bug == "router_weight_twice":
                y = y * weight
        routed.index_add_(0, tok, _round_to(y, slot))
    return routed, shared_forward(fx, spec, x, device, bug, slot)


def shared_forward(fx, spec, x, device, bug, slot):
    """The shared experts' sum [T, H] (zeros where the case has none or this EP rank does not add them)."""
    shape, shared = spec["shape"], torch.zeros_like(x)
    if shape["n_shared"] > 0 and shape["ep_rank"] == 0:
        sq = spec["shared_quant"]
        xs = fake_quantize(x, sq)
        for s in range(shape["n_shared"]):
            shared += _round_to(expert(xs, fx, "shared_", s, sq, spec, spec["activation"]["clamp_shared"], device,
                                       bug), slot)
    return shared


@contextlib.contextmanager
def ieee_fp32_matmul():
    """fp32 matmuls in IEEE fp32 while the layer runs, the previous setting restored after: TF32 would round every
    operand to 10 significand bits (an fp8 code times an fp32 scale has more), which the kernel contract does not
    declare; with it the device's verdicts fail the requantization band on fp8 cases that the CPU passes bit-close
    (results/runs/2026-12-06-h200-capturable/RUN.md)."""
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


class TorchMoe:
    """The kernel object: TorchMoe(bug=None, device="cpu", slot=None, capturable=None)(fixture, out). slot="bf16"
    rounds every slot to bf16 before the top-k sum, as kernels that write each slot's down-projection in bf16 do, and
    declares it (rounding_contract "slot=bf16"); forward(fx, spec, device, bug, slot, capturable) is the layer
    (moe_forward here), its fp32 matmuls in IEEE fp32 (ieee_fp32_matmul). capturable runs the layer with no host sync
    and declares graph_safe (the device probes graph_replay and stream_order); without it the kernel declares
    graph_safe False (stream_order only). Default: capturable on a device, not on the CPU."""

    id = "torch-moe"
    forward = staticmethod(moe_forward)

    def __init__(self, bug=None, device="cpu", slot=None, capturable=None):
        bug = bug if bug is not None else (os.environ.get("MOE_TORCH_BUG") or None)
        if bug is not None and bug not in BUGS:
            raise ValueError(f"torch_moe: unknown bug {bug!r}; one of {', '.join(BUGS)}")
        self.bug, self.device, self.slot = bug, device, slot
        self.needs_device = str(device) != "cpu"
        self.version = f"torch {torch.__version__}" + (f" bug {bug}" if bug else "")
        self.rounding_contract = f"slot={slot}" if slot else "default"
        self.capturable = self.needs_device if capturable is None else bool(capturable)
        self.graph_safe = self.capturable

    def supports(self, case):
        if case.spec["dtypes"]["output"] == "bf16" and not hasattr(torch, "bfloat16"):
            return "this torch has no bfloat16"
        return None

    def __call__(self, fx, out):
        spec = fx.spec
        od = spec["dtypes"]["output"]
        with torch.no_grad(), ieee_fp32_matmul():
            routed, shared = self.forward(DeviceFixture(fx, self.device), spec, self.device, self.bug, self.slot,
                                          self.capturable)
            if spec["execution"]["shared_path"] == "separate":
                y = _round_to(_round_to(routed, od) + _round_to(shared, od), od)
            else:
                y = routed + shared
            target = to_torch(out)
            target.copy_(y.to(target.device, target.dtype))
        return self.variant()

    def variant(self):
        return f"torch/{self.device}/" + ("by-expert" if self.capturable else f"block{BLOCK}")
