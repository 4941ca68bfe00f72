"""Panel members on a GPU's own arithmetic (docs/judging.md "The independent panel"): the vLLM pipeline of
panel_members.VllmStyle with its fp8 x fp8 GEMMs on the device's fp8 matrix units, the activation and weight scales
applied in fp32 after (per 128-wide K block for block scales, as vLLM's fused_moe_kernel does), every other GEMM in
fp32 (TF32 off). Their legitimate variation is the hardware's: the matrix units' accumulation order and precision,
which no CPU member reproduces. Without CUDA, or for an operand the fp8 units do not take (fnuz codes, MX blocks,
dimensions not multiples of 16), a GEMM runs in fp32 on the device (or the CPU).

  vllm-torch      torch._scaled_mm with unit scales and fp32 out, use_fast_accum=False: cuBLASLt promotes its
                  partial sums into fp32 every few K blocks, which at the panel's K of 128 to 512 leaves the fast
                  path's error (fit 13-16 bits truncating, results/runs/2026-12-06-h200-accum/RUN.md): it declares
                  accum=mma14 like the other two.
  vllm-fastaccum  the same with use_fast_accum=True: cuBLASLt's fast accumulation keeps the whole K on the matrix
                  units' accumulator, as vLLM's Triton per-tensor / per-channel path does (fused_moe_kernel's
                  `tl.dot(a, b, acc=accumulator)` with Triton's sm_90 default max_num_imprecise_acc = 2^30).
  vllm-triton     our own Triton fp8 GEMM (panel_triton.py: tl.dot on fp8 operands with the accumulator carried
                  through the K loop), Triton's default accumulation on the device.

All three declare accum=mmaN, N = MMA_BITS (accum=mma14), on a case whose routed or shared GEMMs run on the fp8
units.
"""
import numpy as np
import torch

from panel_members import VllmStyle
from panel_weights import block_rows, dequantized

# The significand the Hopper fp8 matrix units keep when they accumulate without promotion. About 14 bits in the
# DeepSeek-V3 technical report (section 3.3.2, H800); results/runs/2026-12-06-h200-accum/measure_accum.py measures
# it on the H200 (fit line "fit ... N"): this number is the one that run's fit must confirm or replace.
MMA_BITS = 14


class TorchVllmStyle(VllmStyle):
    id = "panel-vllm-torch"
    fast_accum = False

    def __init__(self, device=None):
        super().__init__()
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.needs_device = self.device != "cpu"
        self.version = f"torch {torch.__version__} on {self.device}"
        torch.backends.cuda.matmul.allow_tf32 = False
        self.fp8_units = self.device != "cpu" and hasattr(torch, "_scaled_mm")

    def contract_points(self, spec):
        return super().contract_points(spec) + ([f"accum=mma{MMA_BITS}"] if on_fp8_units(spec) else [])

    def _t(self, a):
        return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(self.device)

    def _fp8_dot(self, a, w):
        """a [M, K] and w [N, K] on the e4m3fn grid (fp32 values) -> a @ w^T on the fp8 units, fp32 out."""
        m = a.shape[0]
        pad = (-m) % 16
        at = self._t(np.pad(a, ((0, pad), (0, 0)))).to(torch.float8_e4m3fn)
        wt = self._t(w).to(torch.float8_e4m3fn)
        one = torch.ones((), device=self.device, dtype=torch.float32)
        out = torch._scaled_mm(at, wt.t(), scale_a=one, scale_b=one, out_dtype=torch.float32,
                               use_fast_accum=self.fast_accum)
        return out[:m].cpu().numpy()

    def _fits(self, a, vals):
        return (self.fp8_units and not isinstance(a, np.ndarray) and a.v.shape[1] % 16 == 0 and vals.shape[0] % 16 == 0
                and np.all(np.isfinite(vals)) and np.abs(vals).max() <= 448 and np.abs(a.v).max() <= 448)

    def _gemm(self, a, vals, scale, name):
        if scale is not None and scale[0] in ("tensor", "channel", "block") and self._fits(a, vals) and \
                self.flavor == "fn":
            kind, s = scale
            if kind == "block":
                k = vals.shape[1]
                ws = block_rows(s, vals.shape[0], name == "w13")
                acc = np.zeros((a.v.shape[0], vals.shape[0]), np.float32)
                for kb in range(-(-k // 128)):
                    sl = slice(kb * 128, min(k, kb * 128 + 128))
                    if (sl.stop - sl.start) % 16:
                        return super()._gemm(a, vals, scale, name)
                    acc += self._fp8_dot(a.v[:, sl], vals[:, sl]) * a.s[:, kb:kb + 1] * ws[None, :, kb]
                return acc
            if a.group == a.v.shape[1]:
                ws = np.full(vals.shape[0], s, np.float32) if kind == "tensor" else s
                return self._fp8_dot(a.v, vals) * a.s[:, :1] * ws[None, :]
        x = a if isinstance(a, np.ndarray) else a.dequant()
        w = dequantized(vals, scale, name)
        return (self._t(x) @ self._t(w).T).cpu().numpy()

    def forward(self, fx, spec):
        # e4m3 codes the fp8 units read as fn; the fnuz grid (half of fn's values) goes through the fp32 path
        self.flavor = spec["quant"]["flavor"]
        return super().forward(fx, spec)

    def expert(self, a, fx, prefix, e, q, spec, clamp, gate_up_dt, weight_scale=None):
        saved, self.flavor = self.flavor, q["flavor"]
        try:
            return super().expert(a, fx, prefix, e, q, spec, clamp, gate_up_dt, weight_scale)
        finally:
            self.flavor = saved


def on_fp8_units(spec):
    """Whether a case has a scheme whose GEMMs take fp8 x fp8 operands on the fn grid (the fp8 units' input)."""
    schemes = [spec["quant"]] + ([spec["shared_quant"]] if spec["shape"]["n_shared"] > 0 else [])
    return any(q["weight"] in ("fp8_tensor", "fp8_channel", "fp8_block") and q["act"] in ("fp8_token", "fp8_group128")
               and q["flavor"] == "fn" for q in schemes)


class TorchFastAccum(TorchVllmStyle):
    id = "panel-vllm-fastaccum"
    fast_accum = True


class TritonVllmStyle(TorchFastAccum):
    id = "panel-vllm-triton"

    def __init__(self, device=None):
        super().__init__(device)
        import triton
        self.version += f", triton {triton.__version__}"

    def _fp8_dot(self, a, w):
        from panel_triton import fp8_matmul
        return fp8_matmul(self._t(a), self._t(w)).cpu().numpy()
