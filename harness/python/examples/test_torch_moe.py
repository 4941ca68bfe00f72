# A kernel team's test file (docs/python.md): every case of the suite given by --moe-suite, judged in-process.
#   PYTHONPATH=build/cpu/python:kernels/external python3 -m pytest -p moe_harness.pytest_plugin \
#       --moe-suite smoke --moe-report reports-out/torch harness/python/examples/test_torch_moe.py
import torch
from torch_moe import TorchMoe

KERNEL = TorchMoe()


def test_torch_moe(moe_case, moe_session):
    moe_session.provenance["torch"] = torch.__version__
    moe_case.run(KERNEL)
