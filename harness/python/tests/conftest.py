"""Shared helpers of the module's tests: the CLI binary of the same build (MOE_HARNESS_BIN), `export` of a case, and
a safetensors reader written from the format's definition (8-byte header length, JSON header, raw bytes); it
returns the tensors and the metadata, with each tensor's header dtype added as safetensors.dtype.<name>."""
import json
import os
import struct
import subprocess

import numpy as np
import pytest

NUMPY = {"BF16": np.uint16, "F16": np.float16, "F32": np.float32, "I32": np.int32, "U8": np.uint8,
         "F8_E4M3": np.uint8, "F8_E5M2": np.uint8}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    out = {}
    for name, t in header.items():
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype=NUMPY[t["dtype"]]).reshape(t["shape"])
        out[name].flags.writeable = False
        meta.setdefault(f"safetensors.dtype.{name}", t["dtype"])
    return out, meta


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("MOE_HARNESS_BIN")
    if not path:
        pytest.fail("MOE_HARNESS_BIN is not set: run these tests through ctest, or set it to build/cpu/harness/moe-harness")
    return path


@pytest.fixture(scope="session")
def export(cli, tmp_path_factory):
    """export(case_id) -> (fixture tensors, fixture metadata, reference tensors) as `moe-harness export` writes them."""
    def run(case_id, suite="smoke"):
        out = tmp_path_factory.mktemp("export")
        subprocess.run([cli, "export", case_id, "--suite", suite, "--out", str(out)], check=True,
                       stdout=subprocess.DEVNULL)
        fx, meta = read_safetensors(out / "fixture.safetensors")
        ref, _ = read_safetensors(out / "reference.safetensors")
        return fx, meta, ref
    return run
