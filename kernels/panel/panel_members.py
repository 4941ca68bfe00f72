"""The independent panel: four correct MoE implementations in NumPy, written apart from the harness's reference
(their own decode tables, quantizers, GEMMs and accumulation orders; nothing of the reference is called), each
following a production pipeline's source stage by stage (docs/numerics.md "Where production pipelines round"), each
declaring the rounding contract that pipeline computes (docs/judging.md "The independent panel"). A member is a
Python kernel object for moe_harness: case.run(member) or case.judge(member.forward(...)).

  vllm      vLLM's Triton fused MoE (model_executor/layers/fused_moe/fused_moe.py: fused_experts_impl,
            fused_moe_kernel): GEMM1 into a bf16 cache; silu_and_mul (csrc/activation_kernels.cu: silu_kernel returns
            the fp32 SiLU rounded to bf16, then ACT_FN(x) * y rounds the bf16 product again: act_gate=bf16); the
            intermediate requantized (csrc/quantization/fp8: dynamic_per_token_scaled_fp8_quant, floor 1/512,
            divides; per_token_group_quant_8bit_kernel); GEMM2 with the router weight in its epilogue into a
            per-slot bf16 cache; moe_sum (csrc/moe/moe_align_sum_kernels.cu: moe_sum_kernel) in bf16 after each add
            for top-k 2-4, at::sum_out (fp32, one rounding) otherwise; fp8 block scales applied per 128-wide K block
            inside the loop, per-tensor / per-channel scales in the epilogue; a shared expert as the model's
            separate dense MLP.
  aiter     AITER's CK two-stage MoE (aiter/fused_moe.py: fused_moe_2stages; CK gridwise_moe_gemm.hpp epilogue,
            device_moe_gemm.hpp): fp8 products accumulated in fp32 with the scale product a_s * b_s applied once
            (per token / channel) or per 128-wide K block in K order (block scales); silu(gate) * up in stage 1's
            fp32 epilogue, stored once in bf16, requantized with codes x * fp32(1 / s) (csrc/kernels/quant_kernels.cu)
            but s = amax / qmax; `aiter-source` forms AITER's own s = amax * fp32(1 / qmax) and declares it
            (token_scale_form / group_scale_form=qmax_reciprocal: on bf16 values x / s often lands on an exact tie
            of e4m3, so the two forms disagree on codes); stage 2 scales and weights each slot in
            fp32 and atomically adds it into the bf16 output (InMemoryDataOperationEnum::AtomicAdd): every slot rounded to
            bf16, the sum rounded after each add, in a shuffled order (not deterministic); shared experts fused as
            extra slots.
  splitk    the case's own contract with every GEMM split along K into four fp32 partial sums (stage 1) and summed
            in reverse K order (stage 2), on weights dequantized first.
  finalize  TensorRT-LLM's cutlass MoE (cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_kernels.cu, the same
            code as FlashInfer's cutlass backend): GEMM1 stored in the activation dtype T, doActivationKernel's
            activation in fp32 rounded once, GEMM2 stored unweighted in T per slot, finalizeMoeRoutingKernel's fp32
            sum of w * slot in slot order, rounded once; a shared expert as the model's separate MLP added to the
            routed output. TensorRT-LLM adds b13 and b2 after the rounding of h and of the slot; no contract point
            states that yet (docs/numerics.md), so this member adds them before, as the contract does.
"""
import numpy as np

from panel_formats import bf16_bits_to_f32, round_to
from panel_quant import Fp8Formula, quantize
from panel_weights import block_rows, dequantized, stored

MEMBERS = ("vllm", "aiter", "splitk", "finalize", "vllm-torch", "vllm-fastaccum", "vllm-triton", "aiter-source")


def _f32(t):
    a = np.asarray(t)
    return bf16_bits_to_f32(a.view(np.uint16)) if t.format == "bf16" else a.astype(np.float32)


def _act(h, spec, clamp, gate_dt="f32"):
    """The activation on h [n, 2I] in fp32 (docs/numerics.md "Activations"); with gate_dt bf16 or f16 the gate's
    act(g) is rounded to it before it multiplies u (the `act_gate` point; SwiGLU-OAI has no such split here)."""
    act, layout, inter = spec["activation"], spec["activation"]["layout"], h.shape[1] // 2
    if layout == "gate_up":
        g, u = h[:, :inter], h[:, inter:]
    elif layout == "up_gate":
        u, g = h[:, :inter], h[:, inter:]
    else:
        g, u = h[:, 0::2], h[:, 1::2]
    kind = act["kind"]
    with np.errstate(over="ignore"):
        if kind == "silu":
            return (round_to((g / (np.float32(1) + np.exp(-g))).astype(np.float32), gate_dt) * u).astype(np.float32)
        if kind == "gelu_tanh":
            c = np.float32(np.sqrt(2 / np.pi))
            a = (np.float32(0.5) * g * (1 + np.tanh(c * (g + np.float32(0.044715) * g * g * g)))).astype(np.float32)
            return (round_to(a, gate_dt) * u).astype(np.float32)
        if kind == "gelu_erf":
            from math import erf
            e = np.vectorize(erf, otypes=[np.float64])(g.astype(np.float64) / np.sqrt(2))
            a = 0.5 * g * (1 + e)  # fp64; rounded to fp32 once with u unless act_gate rounds it first
            return ((a if gate_dt == "f32" else round_to(a.astype(np.float32), gate_dt)) * u).astype(np.float32)
        alpha, limit = np.float32(act["swiglu_alpha"]), np.float32(act["swiglu_limit"])
        if clamp:
            g, u = np.minimum(g, limit), np.clip(u, -limit, limit)
        return ((u + 1) * g / (np.float32(1) + np.exp(-alpha * g))).astype(np.float32)


class Member:
    """What every member shares: the routing walk and the kernel-object protocol. A member supplies gemm() (its
    accumulation order and where it applies scales), its formula, its contract and its combine step."""

    id = "panel"
    formula = Fp8Formula()

    def __init__(self):
        self.version = "numpy " + np.__version__

    # Every call reads the expert tensors from the fixture it is given (no prepare()): the token probes relabel
    # experts on a member (docs/judging.md "Token probes").
    rereads_expert_weights = True

    def deterministic(self, case):
        return True

    def contract_points(self, spec):
        return []

    def act_gate(self, spec):
        """The dtype the gate's act(g) is rounded to before it multiplies u (f32: not rounded)."""
        return "f32"

    def supports(self, case):
        if case.spec["rounding"]["pinned"]:
            return "the case pins its rounding contract; a panel member computes its own"
        return None

    def rounding_contract(self, case):
        points = self.contract_points(case.spec) + self.formula.contract_points()
        return ",".join(points) if points else "default"

    # --- the GEMMs ---
    def gemm(self, a, q, vals, scale, name):
        """a [n, K] fp32 activations -> a @ W^T [n, N] in fp32 (W = vals with `scale`)."""
        qa = quantize(a, q, self.formula) if a is not None else None
        return self._gemm(a if qa is None else qa, vals, scale, name)

    def _gemm(self, a, vals, scale, name):
        x = a if isinstance(a, np.ndarray) else a.dequant()
        return x @ dequantized(vals, scale, name).T

    # --- one expert ---
    def expert(self, a, fx, prefix, e, q, spec, clamp, gate_up_dt, weight_scale=None):
        """a [n, H] fp32 (before quantization) -> y [n, H] fp32 before any slot rounding; `weight_scale` [n] the
        router weights when the member applies them in GEMM2's epilogue."""
        v13, s13 = stored(fx, prefix, "w13", e, q)
        h = self.gemm(a, q, v13, s13, "w13")
        if prefix + "w13_bias" in fx:
            h = h + _f32(fx[prefix + "w13_bias"])[e]
        h = round_to(h, gate_up_dt)
        z = round_to(_act(h, spec, clamp, self.act_gate(spec)), spec["dtypes"]["intermediate"])
        v2, s2 = stored(fx, prefix, "w2", e, q)
        y = self.gemm(z, q, v2, s2, "w2")
        if prefix + "w2_bias" in fx:
            y = y + _f32(fx[prefix + "w2_bias"])[e]
        if weight_scale is not None:
            y = y * weight_scale[:, None]
        return y.astype(np.float32)

    def routed_rows(self, fx, spec):
        """(local expert, token indices, slot indices j, router weights) for each local expert with tokens."""
        shape = spec["shape"]
        ids = np.asarray(fx["topk_ids"]).astype(np.int64)
        w = np.asarray(fx["topk_weights"]).astype(np.float32)
        first, local = shape["first_local_expert"], shape["local_experts"]
        for e in range(local):
            tok, j = np.nonzero(ids == first + e)
            if len(tok):
                yield e, tok, j, w[tok, j]

    def inputs(self, fx, spec, tok, weights):
        """The rows an expert reads: x, or for the router weight on the input x * w rounded to the input dtype."""
        x = _f32(fx["x"])[tok]
        if spec["routing"]["router_weight_on"] == "input":
            return round_to(x * weights[:, None], spec["dtypes"]["input"]), True
        return x, False

    def shared_ranks(self, spec):
        shape = spec["shape"]
        return range(shape["n_shared"]) if shape["n_shared"] > 0 and shape["ep_rank"] == 0 else range(0)

    def __call__(self, fx, out):
        spec = fx.spec
        y = self.forward(fx, spec)
        np.asarray(out)[...] = self.encode(y, spec["dtypes"]["output"], out)
        return self.id

    @staticmethod
    def encode(y, dtype, out):
        """fp32 values as the output tensor's storage (bf16 bits as uint16)."""
        y = round_to(y, dtype)
        if dtype == "bf16":
            return (y.view(np.uint32) >> 16).astype(np.uint16).view(np.asarray(out).dtype)
        return y.astype(np.asarray(out).dtype)


class VllmStyle(Member):
    id = "panel-vllm"
    formula = Fp8Formula(token_floor=1.0 / 512.0, group_floor=1e-10)

    def act_gate(self, spec):
        # silu_and_mul, gelu_and_mul, gelu_tanh_and_mul round act(g) to the activation dtype first; gpt-oss's
        # SwiGLU runs fused in fp32 in vLLM (triton_kernels), not through these kernels.
        return "f32" if spec["activation"]["kind"] == "swiglu_oai" else "bf16"

    def contract_points(self, spec):
        k = spec["shape"]["topk"]
        p = ["gate_up=bf16"] + (["act_gate=bf16"] if self.act_gate(spec) == "bf16" else [])
        p += ["slot=bf16", "reduce=" + ("bf16" if 2 <= k <= 4 else "f32")]
        return p + (["shared=separate"] if spec["shape"]["n_shared"] > 0 else [])

    def _gemm(self, a, vals, scale, name):
        if scale is None or isinstance(a, np.ndarray) or scale[0] == "mx":
            return super()._gemm(a, vals, scale, name)
        kind, s = scale
        if kind in ("tensor", "channel") and a.group == a.v.shape[1]:
            # per-token or per-tensor: the fp8 dot of grid values, both scales in the epilogue
            ws = np.full(vals.shape[0], s, np.float32) if kind == "tensor" else s
            return (a.v @ vals.T) * a.s[:, :1] * ws[None, :]
        if kind == "block":
            # per 128-wide K block: acc += (a_blk . w_blk) * a_s[kb] * w_s[n/128, kb]
            k = vals.shape[1]
            ws = block_rows(s, vals.shape[0], name == "w13")
            acc = np.zeros((a.v.shape[0], vals.shape[0]), np.float32)
            for kb in range(-(-k // 128)):
                sl = slice(kb * 128, min(k, kb * 128 + 128))
                acc += (a.v[:, sl] @ vals[:, sl].T) * a.s[:, kb:kb + 1] * ws[None, :, kb]
            return acc
        return super()._gemm(a, vals, scale, name)

    def forward(self, fx, spec):
        T, H = spec["shape"]["tokens"], spec["shape"]["hidden"]
        k = spec["shape"]["topk"]
        q = spec["quant"]
        cache3 = np.zeros((T, k, H), np.float32)  # the per-slot bf16 cache (zeros: EP slots of other ranks)
        for e, tok, j, w in self.routed_rows(fx, spec):
            a, on_input = self.inputs(fx, spec, tok, w)
            y = self.expert(a, fx, "", e, q, spec, True, "bf16", None if on_input else w)
            cache3[tok, j] = round_to(y, "bf16")
        if 2 <= k <= 4:
            routed = cache3[:, 0]
            for j in range(1, k):
                routed = round_to(routed + cache3[:, j], "bf16")
        else:
            routed = cache3.sum(axis=1, dtype=np.float32)
        out = round_to(routed, spec["dtypes"]["output"])
        if spec["shape"]["n_shared"] > 0 and spec["shape"]["ep_rank"] == 0:
            x = _f32(fx["x"])
            shared = np.zeros_like(out)
            for s in self.shared_ranks(spec):
                y = self.expert(x, fx, "shared_", s, spec["shared_quant"], spec, spec["activation"]["clamp_shared"],
                                "bf16")
                shared = round_to(shared + round_to(y, "bf16"), "bf16")
            od = spec["dtypes"]["output"]
            out = round_to(out + round_to(shared, od), od)
        return out


class AiterStyle(Member):
    id = "panel-aiter"
    formula = Fp8Formula(reciprocal=True)

    def __init__(self, seed=0, source_scale=False):
        super().__init__()
        self.rng = np.random.default_rng(seed)
        if source_scale:  # AITER's s = amax * fp32(1 / qmax), declared: token_scale_form / group_scale_form
            self.id, self.formula = "panel-aiter-source", Fp8Formula(reciprocal=True, qmax_reciprocal=True)

    def deterministic(self, case):
        return False  # atomic adds into the output: their order changes from run to run

    def _gemm(self, a, vals, scale, name):
        """fp32 accumulation of the codes' products (MFMA), the scale product a_s * b_s (one fp32 rounding) applied
        once in the epilogue (per token / channel) or to each 128-wide K block's partial sum, blocks in K order."""
        if scale is None or isinstance(a, np.ndarray) or scale[0] == "mx":
            return super()._gemm(a, vals, scale, name)
        kind, s = scale
        if kind in ("tensor", "channel") and a.group == a.v.shape[1]:
            ws = np.full(vals.shape[0], s, np.float32) if kind == "tensor" else s
            return (a.s[:, :1] * ws[None, :]).astype(np.float32) * (a.v @ vals.T)
        if kind == "block" and a.group == 128:
            k = vals.shape[1]
            ws = block_rows(s, vals.shape[0], name == "w13")
            acc = np.zeros((a.v.shape[0], vals.shape[0]), np.float32)
            for kb in range(-(-k // 128)):
                sl = slice(kb * 128, min(k, kb * 128 + 128))
                acc += (a.s[:, kb:kb + 1] * ws[None, :, kb]).astype(np.float32) * (a.v[:, sl] @ vals[:, sl].T)
            return acc
        return super()._gemm(a, vals, scale, name)

    def forward(self, fx, spec):
        T, H = spec["shape"]["tokens"], spec["shape"]["hidden"]
        q, od = spec["quant"], spec["dtypes"]["output"]
        adds = []  # (tokens, rows): each slot's weighted contribution, rounded to the output dtype (moe_out's)
        for e, tok, j, w in self.routed_rows(fx, spec):
            a, on_input = self.inputs(fx, spec, tok, w)
            adds += [(tok, round_to(self.expert(a, fx, "", e, q, spec, True, "f32", None if on_input else w), od))]
        x = _f32(fx["x"])
        for s in self.shared_ranks(spec):
            y = self.expert(x, fx, "shared_", s, spec["shared_quant"], spec, spec["activation"]["clamp_shared"], "f32")
            adds += [(np.arange(T), round_to(y, od))]
        rows = [(t, r) for tok, y in adds for t, r in zip(tok, y)]
        out = np.zeros((T, H), np.float32)
        for i in self.rng.permutation(len(rows)):  # the atomic adds, each rounded in the output dtype
            t, r = rows[i]
            out[t] = round_to(out[t] + r, od)
        return out

    def contract_points(self, spec):
        od = spec["dtypes"]["output"]
        return ["gate_up=f32", f"slot={od}", f"reduce={od}"] + (["shared=fused"] if spec["shape"]["n_shared"] > 0
                                                                  else [])


class SplitK(Member):
    id = "panel-splitk"

    def _gemm(self, a, vals, scale, name):
        x = a if isinstance(a, np.ndarray) else a.dequant()
        w = dequantized(vals, scale, name)
        k = w.shape[1]
        if name == "w13":
            bounds = np.linspace(0, k, 5).astype(int)
            parts = [x[:, b0:b1] @ w[:, b0:b1].T for b0, b1 in zip(bounds[:-1], bounds[1:])]
            return ((parts[0] + parts[1]) + (parts[2] + parts[3])).astype(np.float32)
        acc = np.zeros((x.shape[0], w.shape[0]), np.float32)
        for c in reversed(range(0, k, 64)):
            acc += x[:, c:c + 64] @ w[:, c:c + 64].T
        return acc

    def forward(self, fx, spec):
        """The case's own contract: its gate_up, slot and reduce dtypes and shared path."""
        T, H = spec["shape"]["tokens"], spec["shape"]["hidden"]
        k, dt = spec["shape"]["topk"], spec["dtypes"]
        q = spec["quant"]
        slots = np.zeros((T, k, H), np.float32)
        written = np.zeros((T, k), bool)
        for e, tok, j, w in self.routed_rows(fx, spec):
            a, on_input = self.inputs(fx, spec, tok, w)
            y = self.expert(a, fx, "", e, q, spec, True, dt["gate_up"], None if on_input else w)
            slots[tok, j], written[tok, j] = round_to(y, dt["slot"]), True
        acc = np.zeros((T, H), np.float32)
        for j in range(k):
            acc = np.where(written[:, j:j + 1], round_to(acc + slots[:, j], dt["reduce"]), acc)
        x = _f32(fx["x"])
        separate = spec["execution"]["shared_path"] == "separate"
        shared = np.zeros_like(acc)
        for s in self.shared_ranks(spec):
            y = round_to(self.expert(x, fx, "shared_", s, spec["shared_quant"], spec,
                                     spec["activation"]["clamp_shared"], dt["gate_up"]), dt["slot"])
            if separate:
                shared = round_to(shared + y, dt["reduce"])
            else:
                acc = round_to(acc + y, dt["reduce"])
        if separate and len(self.shared_ranks(spec)):
            od = dt["output"]
            return round_to(round_to(acc, od) + round_to(shared, od), od)
        return acc


class Finalize(Member):
    id = "panel-finalize"

    def contract_points(self, spec):
        t = spec["dtypes"]["input"]
        return [f"gate_up={t}", f"slot={t}", "reduce=f32", "weight=finalize"] + (
            ["shared=separate"] if spec["shape"]["n_shared"] > 0 else [])

    def _gemm(self, a, vals, scale, name):
        if scale is not None and scale[0] == "block" and not isinstance(a, np.ndarray):
            # fp32 accumulation of each 128-wide K block's dot on dequantized operands, blocks in order
            x, w = a.dequant(), dequantized(vals, scale, name)
            k = w.shape[1]
            acc = np.zeros((x.shape[0], w.shape[0]), np.float32)
            for kb in range(0, k, 128):
                acc += x[:, kb:kb + 128] @ w[:, kb:kb + 128].T
            return acc
        return super()._gemm(a, vals, scale, name)

    def forward(self, fx, spec):
        T, H = spec["shape"]["tokens"], spec["shape"]["hidden"]
        k, t, od = spec["shape"]["topk"], spec["dtypes"]["input"], spec["dtypes"]["output"]
        q = spec["quant"]
        unweighted = np.zeros((T, k, H), np.float32)  # GEMM2's output per slot in T, router weight not applied
        weights = np.zeros((T, k), np.float32)
        for e, tok, j, w in self.routed_rows(fx, spec):
            a, on_input = self.inputs(fx, spec, tok, w)
            unweighted[tok, j] = round_to(self.expert(a, fx, "", e, q, spec, True, t), t)
            weights[tok, j] = 1.0 if on_input else w
        out = np.zeros((T, H), np.float32)
        for j in range(k):  # finalize: slot order, the router weight applied here
            out += unweighted[:, j] * weights[:, j:j + 1]
        if not len(self.shared_ranks(spec)):
            return out
        x = _f32(fx["x"])
        shared = np.zeros_like(out)
        for s in self.shared_ranks(spec):
            shared += round_to(self.expert(x, fx, "shared_", s, spec["shared_quant"], spec,
                                           spec["activation"]["clamp_shared"], t), t)
        return round_to(round_to(out, od) + round_to(shared, od), od)


def make(name, seed=0):
    if name in ("vllm-torch", "vllm-fastaccum", "vllm-triton"):  # torch (and triton) only for these members
        import panel_torch
        return {"vllm-torch": panel_torch.TorchVllmStyle, "vllm-fastaccum": panel_torch.TorchFastAccum,
                "vllm-triton": panel_torch.TritonVllmStyle}[name]()
    return {"vllm": VllmStyle, "aiter": lambda: AiterStyle(seed), "splitk": SplitK, "finalize": Finalize,
            "aiter-source": lambda: AiterStyle(seed, source_scale=True)}[name]()
