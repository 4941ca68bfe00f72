"""moe_harness.torch: fixture tensors as torch tensors, without a copy on the CPU.

to_torch(t, device=None) views a moe_harness.Tensor through DLPack and gives it the torch dtype of its format where
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

The device probes (docs/python.md "Device probes") call the kernel with a fixture and an output in device memory:
each a DeviceTensor (its .format, and .tensor, the torch tensor in the format's torch dtype as above). to_torch gives
that tensor itself (no copy: a CUDA graph captures reads and writes of this storage), or, for another device, a copy
there (tensor.to(device), the same tensor when it is already there).
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


class DeviceTensor:
    """A fixture tensor or an output in device memory: .format (the format's name) and .tensor (torch)."""

    __slots__ = ("format", "tensor")

    def __init__(self, fmt, tensor):
        self.format, self.tensor = fmt, tensor

    shape = property(lambda self: tuple(self.tensor.shape))

    def __dlpack__(self, stream=None):
        return self.tensor.__dlpack__(stream)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()

    def __repr__(self):
        return f"moe_harness.torch.DeviceTensor({self.format}, {list(self.tensor.shape)}, {self.tensor.device})"


def to_torch(t, device=None):
    """t as a torch tensor: a moe_harness.Tensor viewed without a copy (on "cpu", the default) or copied to
    `device`; a DeviceTensor's own tensor (no copy), or a copy of it on another `device`."""
    if isinstance(t, DeviceTensor):
        return t.tensor if device is None else t.tensor.to(device)
    want = torch_dtype(t.format)
    if t.format == "bf16" and want is None:
        x = torch.from_numpy(np.asarray(t)).view(torch.int16)  # no bfloat16 in this torch: the bits
    else:
        x = torch.utils.dlpack.from_dlpack(t)
        if want is not None and x.dtype != want:
            x = x.view(want)
    return x if device is None or str(device) == "cpu" else x.to(device)
