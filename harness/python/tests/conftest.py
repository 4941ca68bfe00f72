"""Shared helpers of the module's tests: the CLI binary of the same build (MOE_HARNESS_BIN) and `export` of a case,
read with the example runner's safetensors reader (kernels/external/numpy_runner.py: a program outside the harness,
so the fixture's bytes reach the tests without the module)."""
import os
import subprocess

import numpy_runner
import pytest


def read_safetensors(path):
    """{name: array} and the metadata, each tensor's header dtype added as safetensors.dtype.<name>."""
    tensors, meta = numpy_runner.read_safetensors(path)
    for name, (dtype, _) in tensors.items():
        meta.setdefault(f"safetensors.dtype.{name}", dtype)
    return {name: a for name, (_, a) in tensors.items()}, meta


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
