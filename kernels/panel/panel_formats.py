"""Element formats for the independent panel, written from the format definitions (docs/numerics.md "Element
formats", the OCP FP8 and MX v1.0 specifications), never from the harness's codecs: a decode table per format and
round-to-nearest-even into bf16 / f16 / e4m3 in NumPy.

Every function takes and returns NumPy arrays; fp32 results are np.float32.
"""
import math

import numpy as np


def _e4m3_values(fnuz):
    """Value of each e4m3 code: s eeee mmm; fn bias 7 (0x7F, 0xFF NaN), fnuz bias 8 (0x80 the only NaN, no -0)."""
    bias, v = (8 if fnuz else 7), []
    for code in range(256):
        s, e, m = code >> 7, (code >> 3) & 15, code & 7
        mag = math.ldexp(m / 8.0, 1 - bias) if e == 0 else math.ldexp(1.0 + m / 8.0, e - bias)
        v.append(-mag if s else mag)
    if fnuz:
        v[0x80] = math.nan
    else:
        v[0x7F] = v[0xFF] = math.nan
    return np.array(v, dtype=np.float32)


E4M3 = {"e4m3fn": _e4m3_values(False), "e4m3fnuz": _e4m3_values(True)}
E4M3_MAX = {"fn": 448.0, "fnuz": 240.0}
# E2M1: bias 1, codes 0..7 = 0, 0.5, 1, 1.5, 2, 3, 4, 6; bit 3 the sign.
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=np.float32)


def e8m0_values(edges):
    """2^(code - 127); 0xFF NaN and 0x00 2^-127 (OCP), or 0xFF +Inf and 0x00 zero (triton_kernels)."""
    v = [math.ldexp(1.0, c - 127) for c in range(256)]
    v[0xFF] = math.nan if edges == "ocp" else math.inf
    if edges == "triton":
        v[0] = 0.0
    return np.array(v, dtype=np.float64).astype(np.float32)


def bf16_bits_to_f32(u16):
    return (np.asarray(u16).astype(np.uint32) << 16).view(np.float32)


def round_bf16(x):
    """fp32 -> bf16 -> fp32, round to nearest even (NaN stays NaN)."""
    x = np.asarray(x, dtype=np.float32)
    u = np.atleast_1d(x).view(np.uint32).astype(np.uint64)
    s16 = np.uint64(16)
    r = (((u + np.uint64(0x7FFF) + ((u >> s16) & np.uint64(1))) >> s16) << s16).astype(np.uint32).view(np.float32)
    r = r.reshape(x.shape)
    return np.where(np.isnan(x), x, r)


def round_to(x, dtype):
    """A value stored in a case dtype (bf16, f16, f32) and read back."""
    if dtype == "bf16":
        return round_bf16(x)
    if dtype == "f16":
        return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)
    return np.asarray(x, dtype=np.float32)


def round_e4m3(v, flavor):
    """v (fp32) to the nearest e4m3 value, ties to even, saturating at the largest finite; NaN stays NaN. The grid
    spacing at |v| in [2^e, 2^(e+1)) is 2^(e-3); below the smallest normal (2^-6 fn, 2^-7 fnuz) it is the
    subnormal step (2^-9 fn, 2^-10 fnuz)."""
    v = np.asarray(v, dtype=np.float32)
    a = np.abs(v).astype(np.float64)
    min_exp = -6 if flavor == "fn" else -7
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    step = np.exp2(np.maximum(e, min_exp) - 3)
    q = np.minimum(np.round(a / step) * step, E4M3_MAX[flavor])  # np.round: half to even
    return np.where(np.isnan(v), v, np.copysign(q, v)).astype(np.float32)


def e2m1_unpack(codes):
    """uint8 [..., n/2] -> codes [..., n]: the even element in the low nibble (OCP MX, gpt-oss, ONNX)."""
    lo, hi = codes & 15, codes >> 4
    return np.stack([lo, hi], axis=-1).reshape(*codes.shape[:-1], codes.shape[-1] * 2)
