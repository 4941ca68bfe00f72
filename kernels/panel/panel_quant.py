"""Activation quantizers of the panel, with the formulas production pipelines use (each a member's choice):

  fp8 per token / per 1 x 128 group:  s = max(amax, floor) / qmax  or  max(amax, floor) * (1 / qmax)
                                      (ue8m0: then s = 2^ceil(log2 s)),
                                      q = e4m3(clamp(x / s, +-qmax))  or  e4m3(clamp(x * (1 / s), +-qmax))
  MXFP8 (32-blocks along K, E8M0 scale, e4m3 elements), the case's scale mode: floor, rceil or even.

vLLM's dynamic per-token fp8 quantizer is s = max(amax / qmax, 1 / (qmax * 512)) (an amax floor of 1/512) and
divides (csrc/quantization/fp8/common.cuh: scaled_fp8_conversion<false>); its per-token-group quantizer is
max(amax, 1e-10) / qmax and divides (the DeepSeek 1 x 128 groups, ue8m0 rounding the scale up). AITER's forms the
scale as amax * fp32(1 / qmax) and multiplies by the scale's reciprocal (csrc/kernels/quant_kernels.cu:
data_to_per_row_scale, dynamic_per_group_scaled_quant_kernel). Where the formulas come from: docs/numerics.md
"Where production pipelines round".
"""
import numpy as np

from panel_formats import E4M3_MAX, e8m0_values, round_e4m3


class Fp8Formula:
    """How a member computes a dynamic fp8 activation scale: the amax floor per token and per group (None: the
    case's `amax_floor`), whether it divides by the scale or multiplies by its fp32 reciprocal (the contract points
    token_scale / group_scale), and whether the scale is amax / qmax or amax * fp32(1 / qmax) (`qmax_reciprocal`,
    AITER's: token_scale_form / group_scale_form; it moves the scale by an fp32 ulp and a code only at an exact
    tie)."""

    def __init__(self, token_floor=None, group_floor=None, reciprocal=False, qmax_reciprocal=False):
        self.token_floor, self.group_floor, self.reciprocal = token_floor, group_floor, reciprocal
        self.qmax_reciprocal = qmax_reciprocal

    def contract_points(self):
        """The contract points that state this formula (docs/numerics.md "The rounding contract")."""
        p = []
        if self.token_floor is not None:
            p.append(f"token_floor={self.token_floor!r}")
        if self.group_floor is not None:
            p.append(f"group_floor={self.group_floor!r}")
        if self.qmax_reciprocal:
            p += ["token_scale_form=qmax_reciprocal", "group_scale_form=qmax_reciprocal"]
        if self.reciprocal:
            p += ["token_scale=reciprocal", "group_scale=reciprocal"]
        return p


class Quantized:
    """Rows quantized in groups of `group` along K: grid values v [n, K] (e4m3 values, or MX elements times their
    E8M0 scale) and per-group scales s [n, ceil(K / group)] (ones for MX). dequant() = v * s."""

    def __init__(self, v, s, group):
        self.v, self.s, self.group = v, s, group

    def dequant(self):
        k = self.v.shape[1]
        return (self.v * np.repeat(self.s, self.group, axis=1)[:, :k]).astype(np.float32)


def _fp8_groups(x, group, q, formula):
    n, k = x.shape
    flavor = q["flavor"]
    qmax = np.float32(q["qmax"] or E4M3_MAX[flavor])
    floor = formula.token_floor if group == k else formula.group_floor
    floor = np.float32(q["amax_floor"] if floor is None else floor)
    nb = -(-k // group)
    pad = np.zeros((n, nb * group), dtype=np.float32)
    pad[:, :k] = x
    blocks = pad.reshape(n, nb, group)
    amax = np.max(np.where(np.isnan(blocks), 0, np.abs(blocks)), axis=-1)
    if formula.qmax_reciprocal:
        s = (np.maximum(amax, floor).astype(np.float32) * (np.float32(1) / qmax)).astype(np.float32)
    else:
        s = (np.maximum(amax, floor) / qmax).astype(np.float32)
    if q["scale_pow2"]:
        m, e = np.frexp(s)
        s = np.where(m == 0.5, s, np.ldexp(np.float32(1), e)).astype(np.float32)
    if formula.reciprocal:
        v = blocks * (np.float32(1) / s)[..., None]
    else:
        v = blocks / s[..., None]
    v = np.clip(v.astype(np.float32), -qmax, qmax)  # NaN passes the clip
    return Quantized(round_e4m3(v, flavor).reshape(n, nb * group)[:, :k], s, group)


def _mx_shared_exponent(amax, mode):
    """The E8M0 exponent of a 32-block for e4m3 elements (emax 8, largest 448): OCP FLOOR, RCEIL or AITER EVEN."""
    with np.errstate(divide="ignore"):
        if mode == "floor":
            x = np.floor(np.log2(np.where(amax > 0, amax, 1.0))) - 8
        elif mode == "rceil":
            x = np.ceil(np.log2(np.where(amax > 0, amax / 448.0, 1.0)))
        else:  # even: add 2^(22 - 3) to amax's fp32 bits, keep sign and exponent, then FLOOR
            bits = (amax.astype(np.float32).view(np.uint32).astype(np.uint64) + (1 << 19)) & 0xFF800000
            r = bits.astype(np.uint32).view(np.float32).astype(np.float64)
            x = np.where(np.isinf(r), 128 - 8, np.floor(np.log2(np.where(r > 0, r, 1.0))) - 8)
    x = np.where(amax > 0, x, -127)
    return np.clip(x, -127, 127).astype(np.int64)


def _mxfp8(x, q):
    n, k = x.shape
    blocks = x.reshape(n, k // 32, 32).astype(np.float32)
    amax = np.abs(blocks).max(axis=-1).astype(np.float64)
    se = _mx_shared_exponent(amax, q["mx_mode"])
    scale = e8m0_values(q["e8m0_edges"])[se + 127]
    v = (blocks.astype(np.float64) * np.exp2(-se.astype(np.float64))[..., None]).astype(np.float32)
    vals = (round_e4m3(v, "fn") * scale[..., None]).reshape(n, k).astype(np.float32)
    return Quantized(vals, np.ones((n, 1), dtype=np.float32), k)


def quantize(x, q, formula):
    """x [n, K] (fp32) in the activation format of scheme q, or None when the scheme keeps activations unquantized."""
    x = np.asarray(x, dtype=np.float32)
    if q["act"] == "none":
        return None
    if q["act"] == "mxfp8":
        return _mxfp8(x, q)
    return _fp8_groups(x, x.shape[1] if q["act"] == "fp8_token" else 128, q, formula)


def fake_quantize(x, q, formula):
    """dequant(quant(x)): the values a GEMM on dequantized activations reads."""
    z = quantize(x, q, formula)
    return np.asarray(x, dtype=np.float32) if z is None else z.dequant()
