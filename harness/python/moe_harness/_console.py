"""The `moe-harness` console script of a pip-installed package: runs the CLI binary the wheel ships in
moe_harness/_native/bin/, which finds its suites in ../share/moe-harness/cases/ beside it (as after `cmake --install`)."""
import os
import sys


def main():
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native", "bin", "moe-harness")
    if not os.access(exe, os.X_OK):
        sys.exit(f"moe-harness: {exe}: missing or not executable; this package was not installed from a wheel "
                 f"(pip install .); in a build tree run build/<preset>/harness/moe-harness")
    os.execv(exe, [exe, *sys.argv[1:]])
