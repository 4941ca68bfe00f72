# A kernel team's test file for a Triton kernel on a GPU (docs/python.md): every case of the suite, in-process.
#   PYTHONPATH=build/cuda/python:kernels/external python3 -m pytest -p moe_harness.pytest_plugin --moe-suite nightly \
#       --moe-device cuda --moe-kernel-id triton-moe --moe-report reports-out/triton harness/python/examples/test_triton_moe.py
import triton
from triton_moe import TritonMoe

KERNEL = TritonMoe(device="cuda")


def test_triton_moe(moe_case, moe_session):
    moe_session.provenance["triton"] = triton.__version__
    moe_case.run(KERNEL)
