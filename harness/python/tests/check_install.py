#!/usr/bin/env python3
"""`cmake --install BUILD --prefix PREFIX` gives an importable moe_harness under PREFIX/SITE (a fresh interpreter, run
from outside the trees, with only that directory on its path) that loads a suite and judges a case.

Usage: check_install.py CMAKE BUILD_DIR PREFIX SITE_RELATIVE_DIR"""
import os
import shutil
import subprocess
import sys

cmake, build, prefix, site = sys.argv[1:5]
shutil.rmtree(prefix, ignore_errors=True)
subprocess.run([cmake, "--install", build, "--prefix", prefix], check=True, stdout=subprocess.DEVNULL)
pkg = os.path.join(prefix, site, "moe_harness")
assert os.path.isfile(os.path.join(pkg, "__init__.py")) and os.path.isfile(os.path.join(pkg, "pytest_plugin.py")), pkg
probe = ("import moe_harness, sys; assert moe_harness.__file__.startswith(sys.argv[1]), moe_harness.__file__; "
         "(c,) = moe_harness.suite('smoke', filter='*/bf16.a16/silu/T3/decode/atomic'); "
         "v = c.run(moe_harness.native_kernel('host')); assert v.passed, v.explain(); print(v)")
env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
env["PYTHONPATH"] = os.path.join(prefix, site)
r = subprocess.run([sys.executable, "-c", probe, pkg], env=env, cwd="/", capture_output=True, text=True)
print(r.stdout + r.stderr)
sys.exit(r.returncode)
