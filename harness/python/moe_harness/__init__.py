"""moe-harness in Python: suites, cases, fixtures, verdicts and reports over the harness's own C++ library (the
public API moe::api, through the native extension moe_harness._moe_harness), so a verdict here is the verdict
`moe-harness run` gives: the same fixture, references, thresholds, checks, probes and report files.

    import moe_harness
    for case in moe_harness.suite("smoke", filter="*fp8*"):
        verdict = case.run(my_kernel)          # my_kernel(fixture, out): the pipeline with its probes
        fx = case.fixture()                    # or step by step: the tensors, zero-copy ...
        verdict = case.judge(my_output)        # ... and the verdict on an output (NumPy or any DLPack tensor)

docs/python.md has the whole tour; moe_harness.pytest_plugin runs a suite under pytest.
"""
import os as _os

# A pip-installed package (setup.py) resolves suite names ("smoke") in the suites its wheel ships beside the CLI,
# unless $MOE_CASES_DIR names others; a build tree's package has no _native/ and resolves them in the source tree.
_cases = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "_native", "share", "moe-harness", "cases")
if _os.path.isdir(_cases):
    _os.environ.setdefault("MOE_CASES_DIR", _cases)

from moe_harness._moe_harness import Error, Fixture, Tensor, build_stamp, version
from moe_harness import _moe_harness as _native
from moe_harness._errors import check_real as _check_real, check_text as _check_text
from moe_harness._errors import native_arguments as _native_arguments
from moe_harness._case import Case, Suite, suite
from moe_harness.session import Session
from moe_harness.verdict import Verdict

__version__ = version()


def native_kernel(id, host_budget=0.0):
    """A kernel of this build by id ("host", "gpu-fused-moe" in a GPU build) as a Python kernel object; host_budget:
    the host kernel's FLOP budget in (0, 1e30], as `run --host-budget` (0: its default). Bad arguments raise
    moe_harness.Error."""
    _check_text(id, "moe_harness.native_kernel()", "id")
    host_budget = _check_real(host_budget, "moe_harness.native_kernel()", "host_budget", 0, 1e30, lo_open=True,
                              default=0)
    with _native_arguments("moe_harness.native_kernel()"):
        return _native.native_kernel(id, host_budget)

__all__ = ["Case", "Error", "Fixture", "Session", "Suite", "Tensor", "Verdict", "build_stamp", "native_kernel",
           "suite", "version"]
