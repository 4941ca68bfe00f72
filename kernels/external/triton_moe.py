"""A Triton fused MoE kernel of the project's own, built the way the Triton MoE kernels of vLLM and SGLang are, as a
Python kernel object for moe_harness: case.run(TritonMoe(device="cuda")) or the pytest plugin (docs/python.md).

The pipeline (docs/numerics.md "The rounding points of the kernel contract"):
  1. align: the local slots (token * k + j) sorted by expert, each expert's run padded to whole blocks of BLOCK_M
     with a sentinel slot id (T * k, past the last slot), and one expert id per block (moe_align_block_size);
  2. stage 1: a grouped GEMM over the blocks, one program per (block, column tile): the block's rows gathered from the
     token's activations (quantized once per token; for the router weight on the input, per slot), times the block's
     expert's w13, plus its bias, into an fp32 [T * k, 2I] buffer;
  3. the activation, the intermediate rounding and the activation quantization of the scheme, per slot row (torch,
     as the Triton pipelines run their activation kernel between the GEMMs);
  4. stage 2: the same grouped GEMM on w2, its bias, then the router weight in the epilogue, into fp32 [T * k, H];
  5. the k slots of each token summed in fp32; shared experts, the shared-path combination and the output rounding
     as in torch_moe.py.
The GEMMs run on the experts' weights dequantized to fp32 (the element tables of torch_moe.py) with fp32 products
(tl.dot, input_precision "ieee": no TF32), so the kernel keeps the contract's default points; TritonMoe(slot="bf16")
rounds each slot before the sum and declares it.

On a device (TritonMoe(device="cuda"); capturable= picks) the alignment has the sizes a CUDA graph can hold (room for
the most blocks any routing needs, the unused ones all sentinel slots; align_block_size_static) and every local
expert is dequantized, so a call has no host sync and the harness's graph_replay probe can capture it; the used
blocks and their products are the same.

Without Triton (the CPU machine) the same launches run through an emulation of the GEMM program in torch, block by
block with the same gathers, masks and epilogue; its variant says "emulated". The CPU tests pin the alignment,
the blocks and the injected defects that way; the H200 runs the Triton programs.

Injectable defects, as in torch_moe.py (TritonMoe(bug=NAME) or MOE_TORCH_BUG=NAME): swiglu_layout,
router_weight_twice (the epilogue multiplies twice), drop_last_block (the grid misses the last block of the aligned
order), fp8_scale_ignored.
"""
import torch

from torch_moe import (BLOCK, BUGS, TorchMoe, _activation, _float, _gate_up, _round_to, _to, dequantize,
                       fake_quantize, shared_forward)

try:
    import triton
    import triton.language as tl
except ImportError:  # the CPU machine: the emulation below runs the same blocks
    triton = None

BLOCK_M = BLOCK  # rows (slots) per block of the aligned order
BLOCK_N, BLOCK_K = 64, 32

if triton is not None:
    @triton.jit
    def _grouped_gemm(a_ptr, b_ptr, bias_ptr, w_ptr, c_ptr, sorted_ptr, block_expert_ptr, n_slots, N, K,
                      stride_am, stride_be, stride_bn, stride_biase, stride_cm,
                      A_DIV: tl.constexpr, HAS_BIAS: tl.constexpr, W_POWER: tl.constexpr,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        """C[slot, n] = (A[slot // A_DIV, :] . B[e, n, :] + bias[e, n]) * w[slot]^W_POWER for the BM slots of one
        block of the aligned order (expert e) and BN columns; sentinel slots (>= n_slots) are masked out."""
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        offs_m = pid_m * BM + tl.arange(0, BM)
        slot = tl.load(sorted_ptr + offs_m)
        valid = slot < n_slots
        e = tl.load(block_expert_ptr + pid_m).to(tl.int64)
        row = (slot // A_DIV).to(tl.int64)
        offs_n = pid_n * BN + tl.arange(0, BN)
        n_ok = offs_n < N
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            offs_k = k0 + tl.arange(0, BK)
            k_ok = offs_k < K
            a = tl.load(a_ptr + row[:, None] * stride_am + offs_k[None, :], mask=valid[:, None] & k_ok[None, :],
                        other=0.0)
            b = tl.load(b_ptr + e * stride_be + offs_n[None, :].to(tl.int64) * stride_bn + offs_k[:, None],
                        mask=n_ok[None, :] & k_ok[:, None], other=0.0)
            acc += tl.dot(a, b, input_precision="ieee")
        if HAS_BIAS:
            acc += tl.load(bias_ptr + e * stride_biase + offs_n, mask=n_ok, other=0.0)[None, :]
        if W_POWER >= 1:
            w = tl.load(w_ptr + slot, mask=valid, other=0.0)
            acc = acc * w[:, None]
            if W_POWER == 2:
                acc = acc * w[:, None]
        tl.store(c_ptr + slot.to(tl.int64)[:, None] * stride_cm + offs_n[None, :], acc,
                 mask=valid[:, None] & n_ok[None, :])


def align_block_size(ids, first, local, block, bug=None):
    """(sorted slot ids [n_blocks * block] int32, the sentinel T * k in the padding; expert of each block [n_blocks],
    local ids): the local slots sorted by expert, stably, each expert's run padded to a multiple of `block`.
    drop_last_block drops the last block, as a grid one block short would."""
    flat = ids.reshape(-1).long() - first
    n = flat.numel()
    slots = torch.nonzero((flat >= 0) & (flat < local)).flatten()
    experts, order = torch.sort(flat[slots], stable=True)
    slots = slots[order]
    counts = torch.bincount(experts, minlength=local)
    blocks = (counts + block - 1) // block
    padded_start = torch.cumsum(blocks * block, 0) - blocks * block
    start = torch.cumsum(counts, 0) - counts
    pos = padded_start[experts] + torch.arange(slots.numel(), device=ids.device) - start[experts]
    sorted_ids = torch.full((int(blocks.sum()) * block,), n, dtype=torch.int32, device=ids.device)
    sorted_ids[pos] = slots.to(torch.int32)
    block_expert = torch.repeat_interleave(torch.arange(local, device=ids.device), blocks).to(torch.int32)
    if bug == "drop_last_block" and block_expert.numel() > 0:
        sorted_ids, block_expert = sorted_ids[:-block], block_expert[:-1]
    return sorted_ids, block_expert


def align_block_size_static(ids, first, local, block, bug=None):
    """align_block_size with the sizes a CUDA graph can hold, computed with no host sync: room for the most blocks
    any routing needs (ceil(T * k / block) + local), the same blocks first, then unused blocks of sentinel slots
    with expert 0 (the GEMM program masks every row of them)."""
    flat = ids.reshape(-1).long() - first
    n, dev = flat.numel(), ids.device
    max_blocks = -(-n // block) + local
    key = torch.where((flat >= 0) & (flat < local), flat, torch.full_like(flat, local))  # other ranks' slots last
    experts, order = torch.sort(key, stable=True)
    counts = (key.unsqueeze(1) == torch.arange(local, device=dev)).sum(0)
    blocks = (counts + block - 1) // block
    padded_start = torch.cumsum(blocks * block, 0) - blocks * block
    start = torch.cumsum(counts, 0) - counts
    e = experts.clamp(max=local - 1)
    pos = padded_start[e] + torch.arange(n, device=dev) - start[e]
    pos = torch.where(experts < local, pos, torch.full_like(pos, max_blocks * block))  # a spare element, dropped
    sorted_ids = torch.full((max_blocks * block + 1,), n, dtype=torch.int32, device=dev)
    sorted_ids = sorted_ids.scatter(0, pos, order.to(torch.int32))[:-1].contiguous()
    ends = torch.cumsum(blocks, 0)
    b = torch.arange(max_blocks, device=dev)
    block_expert = torch.where(b < ends[-1], torch.searchsorted(ends, b, right=True), torch.zeros_like(b))
    if bug == "drop_last_block":  # the last used block's slots become sentinels, as a grid one block short
        sorted_ids = sorted_ids.view(max_blocks, block).masked_fill((b == ends[-1] - 1).unsqueeze(1), n).view(-1)
    return sorted_ids, block_expert.to(torch.int32)


def _emulated_gemm(a, b, bias, w, c, sorted_ids, block_expert, n_slots, a_div, w_power):
    """The Triton program's semantics in torch, block by block (the CPU machine)."""
    for blk in range(block_expert.numel()):
        slot = sorted_ids[blk * BLOCK_M:(blk + 1) * BLOCK_M].long()
        slot = slot[slot < n_slots]
        e = int(block_expert[blk])
        y = a[torch.div(slot, a_div, rounding_mode="floor")] @ b[e].T
        if bias is not None:
            y = y + bias[e]
        for _ in range(w_power):
            y = y * w[slot].unsqueeze(1)
        c[slot] = y


def grouped_gemm(a, b, bias, w, sorted_ids, block_expert, n_slots, a_div, w_power):
    """[n_slots, N] fp32: each aligned block's rows of a (row slot // a_div) times its expert's b [E, N, K]."""
    c = torch.zeros((n_slots, b.shape[1]), dtype=torch.float32, device=a.device)
    if block_expert.numel() == 0:
        return c
    if triton is None or a.device.type == "cpu":
        _emulated_gemm(a, b, bias, w, c, sorted_ids, block_expert, n_slots, a_div, w_power)
        return c
    a, b = a.contiguous(), b.contiguous()
    grid = (block_expert.numel(), triton.cdiv(b.shape[1], BLOCK_N))
    _grouped_gemm[grid](a, b, bias if bias is not None else c, w, c, sorted_ids, block_expert, n_slots, b.shape[1],
                        b.shape[2], a.stride(0), b.stride(0), b.stride(1), bias.stride(0) if bias is not None else 0,
                        c.stride(0), A_DIV=a_div, HAS_BIAS=bias is not None, W_POWER=w_power, BM=BLOCK_M, BN=BLOCK_N,
                        BK=BLOCK_K)
    return c


def _expert_weights(fx, name, hit, q, device, bug):
    """The hit experts' `name` weights dequantized to fp32, stacked [n_hit, rows, cols]."""
    return torch.stack([dequantize(fx, "", name, int(e), q, device, bug) for e in hit])


def triton_forward(fx, spec, device="cpu", bug=None, slot=None, capturable=False):
    """The layer's routed and shared sums [T, H] in fp32 before the output rounding (TorchMoe.forward's contract).
    capturable: the alignment of align_block_size_static and every local expert's weights (no host sync, a fixed
    grid), else the blocks' own count and the hit experts only."""
    shape, routing = spec["shape"], spec["routing"]
    q, act, dtypes = spec["quant"], spec["activation"], spec["dtypes"]
    x = _float(fx["x"], device)
    ids = _to(fx["topk_ids"], device)
    w = _to(fx["topk_weights"], device).reshape(-1).float().contiguous()
    tokens, k = ids.shape
    n_slots = tokens * k
    align = align_block_size_static if capturable else align_block_size
    sorted_ids, block_expert = align(ids, shape["first_local_expert"], shape["local_experts"], BLOCK_M, bug)
    shared = shared_forward(fx, spec, x, device, bug, slot)
    if block_expert.numel() == 0:  # no slot of this EP rank (or the one block dropped)
        return torch.zeros_like(x), shared
    if capturable:  # every local expert, indexed by its id
        hit, block_pos = range(shape["local_experts"]), block_expert.contiguous()
    else:  # only the experts the blocks use are dequantized; the blocks then index them by position
        hit, block_pos = torch.unique(block_expert.long(), return_inverse=True)
        block_pos = block_pos.to(torch.int32).contiguous()
    w13, w2 = _expert_weights(fx, "w13", hit, q, device, bug), _expert_weights(fx, "w2", hit, q, device, bug)
    index = slice(None) if capturable else hit
    b13 = _to(fx["w13_bias"], device).float()[index].contiguous() if "w13_bias" in fx else None
    b2 = _to(fx["w2_bias"], device).float()[index].contiguous() if "w2_bias" in fx else None
    twice = 1 if bug == "router_weight_twice" else 0
    if routing["router_weight_on"] == "input":
        tok = torch.div(torch.arange(n_slots, device=x.device), k, rounding_mode="floor")
        a, a_div = fake_quantize(_round_to(x[tok] * w.unsqueeze(1), dtypes["input"]), q), 1
        w_power = twice
    else:
        a, a_div = fake_quantize(x, q), k
        w_power = 1 + twice
    h = grouped_gemm(a.contiguous(), w13, b13, w, sorted_ids, block_pos, n_slots, a_div, 0)
    g, u = _gate_up(h, act["layout"], bug)
    z = fake_quantize(_round_to(_activation(g, u, act, True), dtypes["intermediate"]), q)
    y = grouped_gemm(z.contiguous(), w2, b2, w, sorted_ids, block_pos, n_slots, 1, w_power)
    return _round_to(y, slot).view(tokens, k, -1).sum(1), shared


class TritonMoe(TorchMoe):
    """The kernel object: TritonMoe(bug=None, device="cuda", slot=None)(fixture, out); the routed experts through
    the Triton grouped GEMMs, the rest as TorchMoe."""

    id = "triton-moe"
    forward = staticmethod(triton_forward)

    def __init__(self, bug=None, device="cuda", slot=None, capturable=None):
        super().__init__(bug=bug, device=device, slot=slot, capturable=capturable)
        engine = f"triton {triton.__version__}" if triton is not None else "no triton"
        self.version = f"{engine}, torch {torch.__version__}" + (f" bug {self.bug}" if self.bug else "")

    def variant(self):
        engine = "triton" if triton is not None and str(self.device) != "cpu" else "triton-emulated"
        return f"{engine}/{self.device}/bm{BLOCK_M}-bn{BLOCK_N}-bk{BLOCK_K}" + ("/static" if self.capturable else "")
