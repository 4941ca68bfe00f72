"""moe_harness.torch: fixture tensors as torch tensors, without a copy on the CPU.

to_torch(t, device="cpu") views a moe_harness.Tensor through DLPack and gives it the torch dtype of its format where
the installed torch has one, else its storage type:

    format    torch dtype (when torch has it)   else
    f32 f16 i32 float32 float16 int32
    bf16      bfloat16                          int16 (the bf16 bits)
    e4m3fn    float8_e4m3fn                     uint8 (the codes)
    e4m3fnuz  float8_e4m3fnuz                   uint8
    e5m2      float8_e5m2                       uint8
    e5m2fnuz  float8_e5m2fnuz                   uint8
    e8m0      float8_e8m0fnu                    uint8
    e2m1x2    float4_e2m1fn_x2                  uint8 (two e2m1 codes a byte, the even element in the low nibble)
    u8        uint8

A device other than "cpu" copies the view there (tensor.to(device)). The view shares the fixture's memory: write
into it only for an output (case.run's `out`, case.new_output()).
"""
import numpy as np
import torch

_TORCH_DTYPES = {"e4m3fn": "float8_e4m3fn", "e4m3fnuz": "float8_e4m3fnuz", "e5m2": "float8_e5m2",
                 "e5m2fnuz": "float8_e5m2fnuz", "e8m0": "float8_e8m0fnu", "e2m1x2": "float4_e2m1fn_x2",
                 "bf16": "bfloat16"}


def torch_dtype(fmt):
    """The torch dtype of a format name, or None when this torch lacks it (the view is then its storage type)."""
    name = _TORCH_DTYPES.get(fmt)
    return getattr(torch, name, None) if name else None


def to_torch(t, device="cpu"):
    want = torch_dtype(t.format)
    if t.format == "bf16" and want is None:
        x = torch.from_numpy(np.asarray(t)).view(torch.int16)  # no bfloat16 in this torch: the bits
    else:
        x = torch.utils.dlpack.from_dlpack(t)
        if want is not None and x.dtype != want:
            x = x.view(want)
    return x if str(device) == "cpu" else x.to(device)
