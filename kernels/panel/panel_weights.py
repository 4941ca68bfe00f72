"""Expert weights of the panel dequantized from the fixture's stored codes and scales (docs/numerics.md "Weight
formats"): bf16 / f16, fp8 e4m3 fn / fnuz per tensor, per output channel and per 128 x 128 block (w13's gate and up
halves blocked apart), MXFP8 and MXFP4 with E8M0 scales per 32 along K.

`stored(fx, prefix, name, e, q)` gives a member what its GEMM reads: (values, scale) where values are the decoded
element codes in fp32 and scale is how the member must apply the scale (None for unscaled weights): ("tensor", s),
("channel", s[N]), ("block", s[N/128, K/128]) or ("mx", s[N, K/32]). Members differ in where they apply it.
"""
import numpy as np

from panel_formats import E2M1, E4M3, bf16_bits_to_f32, e2m1_unpack, e8m0_values


def _as_f32(t, index=None):
    a = np.asarray(t)
    if index is not None:
        a = a[index]
    if t.format == "bf16":
        return bf16_bits_to_f32(a.view(np.uint16))
    return a.astype(np.float32)


def stored(fx, prefix, name, e, q):
    t = fx[prefix + name]
    fmt = q["weight"]
    if fmt in ("bf16", "fp16"):
        return _as_f32(t, e), None
    codes = np.asarray(t)[e].view(np.uint8)
    s = fx[prefix + name + "_scale"]
    if fmt in ("mxfp8", "mxfp4"):
        vals = E2M1[e2m1_unpack(codes)] if fmt == "mxfp4" else E4M3[t.format][codes]
        return vals, ("mx", e8m0_values(q["e8m0_edges"])[np.asarray(s)[e].view(np.uint8)])
    vals = E4M3[t.format][codes]
    scale = _as_f32(s, e)
    if fmt == "fp8_tensor":
        return vals, ("tensor", np.float32(scale.reshape(-1)[0]))
    if fmt == "fp8_channel":
        return vals, ("channel", scale.reshape(-1))
    return vals, ("block", scale)


def block_rows(scale, rows, gate_up_halves):
    """The block scale row of each of `rows` output rows: [rows, ceil(K/128)]."""
    if gate_up_halves:
        half, sb = rows // 2, scale.shape[0] // 2
        return np.concatenate([block_rows(scale[:sb], half, False), block_rows(scale[sb:], half, False)])
    return np.repeat(scale, 128, axis=0)[:rows]


def block_scale_full(scale, rows, cols, gate_up_halves):
    """A [ceil(N/128), ceil(K/128)] block scale expanded to [rows, cols]; w13's gate and up halves are blocked
    separately (each half's rows start a new 128-row block)."""
    if gate_up_halves:
        half, sb = rows // 2, scale.shape[0] // 2
        return np.concatenate([block_scale_full(scale[:sb], half, cols, False),
                               block_scale_full(scale[sb:], half, cols, False)])
    return np.repeat(block_rows(scale, rows, False), 128, axis=1)[:, :cols]


def dequantized(vals, scale, name):
    """The weight in fp32 with its scale applied elementwise (value * scale, one fp32 rounding)."""
    if scale is None:
        return vals
    kind, s = scale
    if kind == "tensor":
        return vals * s
    if kind == "channel":
        return vals * s[:, None]
    if kind == "mx":
        return vals * np.repeat(s, 32, axis=1)
    return vals * block_scale_full(s, vals.shape[0], vals.shape[1], name == "w13")
