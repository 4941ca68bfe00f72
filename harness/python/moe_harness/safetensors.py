"""Read and write safetensors files with NumPy alone (no torch, no safetensors package): what the export route needs
from a pip install (docs/export.md): read `fixture.safetensors` / `reference.safetensors` that `moe-harness export`
wrote, write the output `moe-harness judge --output` reads.

    from moe_harness import safetensors
    tensors, meta = safetensors.read("ex/fixture.safetensors")     # {name: (dtype, ndarray)}, {key: str}
    x = safetensors.to_float32(*tensors["x"])                       # BF16 bits or F16 -> float32
    safetensors.write("ex/out.safetensors", {"out": ("BF16", safetensors.bf16_bits(y))},
                      {"moe.fixture_fingerprint": meta["moe.fixture_fingerprint"]})

The file format (https://github.com/huggingface/safetensors): an 8-byte little-endian header length, a JSON header
{name: {dtype, shape, data_offsets}, "__metadata__": {str: str}}, then the tensors' bytes, little-endian, row-major.
BF16 is held as its 16-bit patterns (uint16; NumPy has no bfloat16); F8_E4M3, F8_E5M2 and U8 as uint8 codes."""
import json
import struct

import numpy as np

from moe_harness._errors import bad_input

# safetensors dtype -> the NumPy type that holds its bytes as they are stored.
DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": np.uint16, "I64": np.int64,
          "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "U16": np.uint16, "U32": np.uint32,
          "U64": np.uint64, "BOOL": np.bool_, "F8_E4M3": np.uint8, "F8_E5M2": np.uint8}
_BY_NUMPY = {np.dtype(np.float64): "F64", np.dtype(np.float32): "F32", np.dtype(np.float16): "F16",
             np.dtype(np.int64): "I64", np.dtype(np.int32): "I32", np.dtype(np.int16): "I16", np.dtype(np.int8): "I8",
             np.dtype(np.uint8): "U8", np.dtype(np.uint32): "U32", np.dtype(np.uint64): "U64",
             np.dtype(np.bool_): "BOOL"}
_MAX_HEADER = 100 << 20  # the safetensors reference refuses headers past 100 MB


def read(path):
    """The tensors of `path` as {name: (dtype, ndarray)} in file order, and its __metadata__ ({} when absent). The
    arrays are views of one bytes object (read-only). A file that is not a well-formed safetensors file raises
    moe_harness.Error (exit_code 2) naming the file and what is wrong."""
    where = f"moe_harness.safetensors.read({path!s})"
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise bad_input(where, "header", f"{len(data)} bytes: shorter than the 8-byte header length", "pass a safetensors file")
    n = struct.unpack("<Q", data[:8])[0]
    if n > min(_MAX_HEADER, len(data) - 8):
        raise bad_input(where, "header", f"header length {n} is past the file's {len(data) - 8} bytes after it",
                        "pass a whole safetensors file")
    try:
        header = json.loads(data[8:8 + n])
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise bad_input(where, "header", f"not JSON ({e})", "pass a safetensors file") from None
    if not isinstance(header, dict):
        raise bad_input(where, "header", "not a JSON object", "pass a safetensors file")
    meta = header.pop("__metadata__", {}) or {}
    body = memoryview(data)[8 + n:]
    tensors = {}
    for name, t in header.items():
        try:
            dtype, shape, (a, b) = t["dtype"], [int(d) for d in t["shape"]], t["data_offsets"]
        except (TypeError, KeyError, ValueError):
            raise bad_input(where, name, f"entry {t!r} lacks dtype, shape or two data_offsets",
                            "write the tensor's dtype, shape and data_offsets") from None
        if dtype not in DTYPES:
            raise bad_input(where, name, f"dtype {dtype!r} is not one of {', '.join(DTYPES)}", "store a known dtype")
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        size = count * np.dtype(DTYPES[dtype]).itemsize
        if not (isinstance(a, int) and isinstance(b, int) and 0 <= a <= b <= len(body) and b - a == size):
            raise bad_input(where, name, f"data_offsets [{a}, {b}] do not hold {shape} {dtype} ({size} bytes) inside "
                                         f"the {len(body)} data bytes", "write the file again")
        tensors[name] = (dtype, np.frombuffer(body[a:b], dtype=DTYPES[dtype]).reshape(shape))
    return tensors, {str(k): str(v) for k, v in meta.items()}


def write(path, tensors, metadata=None):
    """Writes `tensors` ({name: ndarray or (dtype, ndarray)}) in that order with `metadata` ({str: str}). A bare
    array's dtype follows its NumPy type (float32 -> F32, ...); BF16 and the FP8 codes are given as ("BF16", uint16
    bits) or ("F8_E4M3", uint8 codes). A wrong pairing raises moe_harness.Error before anything is written."""
    where = f"moe_harness.safetensors.write({path!s})"
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = {}
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise bad_input(where, "metadata", f"{k!r}: {v!r} is not str: str", "pass string keys and values")
            header["__metadata__"][k] = v
    for name, t in tensors.items():
        dtype, arr = t if isinstance(t, tuple) else (_BY_NUMPY.get(np.asarray(t).dtype), t)
        arr = np.asarray(arr)
        if dtype is None:
            raise bad_input(where, name, f"NumPy dtype {arr.dtype} has no safetensors dtype",
                            'pass ("DTYPE", array), e.g. ("BF16", uint16 bits)')
        if dtype not in DTYPES or np.dtype(DTYPES[dtype]) != arr.dtype:
            want = np.dtype(DTYPES[dtype]).name if dtype in DTYPES else "?"
            raise bad_input(where, name, f"dtype {dtype!r} with a {arr.dtype} array (it is stored as {want})",
                            f"pass a {want} array for {dtype}, or one of {', '.join(DTYPES)}")
        raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def to_float32(dtype, arr):
    """A float32 copy of a BF16 (uint16 bits), F16, F32 or F64 tensor."""
    if dtype == "BF16":
        return (np.asarray(arr, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
    if dtype in ("F16", "F32", "F64"):
        return np.asarray(arr).astype(np.float32)
    raise bad_input("moe_harness.safetensors.to_float32()", "dtype", f"{dtype!r} is not a float dtype it converts",
                    "pass BF16, F16, F32 or F64 (FP8 and FP4 codes need their format's table)")


def bf16_bits(x):
    """float32 values rounded to bfloat16 (nearest even), as uint16 bit patterns; NaN stays a quiet NaN (0x7FC0)."""
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), r)
