# The smallest kernel team's test file: every case of --moe-suite judged in-process, the host kernel of this build
# standing in for the kernel under test (replace KERNEL by your callable: KERNEL(fixture, out); docs/python.md).
#   PYTHONPATH=build/cpu/python python3 -m pytest -p moe_harness.pytest_plugin --moe-suite smoke \
#       harness/python/examples/test_host_kernel.py
# (`-p moe_harness.pytest_plugin` is optional once the package is pip-installed: its pytest11 entry point loads it.)
import moe_harness

KERNEL = moe_harness.native_kernel("host")


def test_host_kernel(moe_case, moe_session):
    moe_session.provenance["example"] = moe_harness.__version__
    moe_case.run(KERNEL)
