#!/usr/bin/env python3
"""`pip install --no-build-isolation .` into a fresh venv (--system-site-packages: Debian's numpy, pytest, setuptools,
wheel; no index, so nothing is downloaded) gives what docs/python.md "pip install" promises: the `moe-harness`
console script (its --version names the project version of CMakeLists.txt), `import moe_harness` from the venv's
site-packages outside both trees, and the pytest plugin loaded by its pytest11 entry point: the example test file
passes without `-p`, and with the entry point turned off (`-p no:...`) pytest knows no --moe-suite; the wheel ships the
plugin ABI header (`moe-harness --plugin-header`) and moe_harness.safetensors; the CLI names itself `moe-harness`
(the console script's path in rerun commands), never the binary inside the package.
The build is BUILD_DIR's (MOE_BUILD_DIR), already built: only what changed is rebuilt.

Usage: check_pip_install.py MOE_ROOT BUILD_DIR WORK_DIR"""
import os
import re
import shutil
import subprocess
import sys

root, build, work = (os.path.abspath(a) for a in sys.argv[1:4])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
venv = os.path.join(work, "venv")
subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
py, cli = os.path.join(venv, "bin", "python"), os.path.join(venv, "bin", "moe-harness")
env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MOE_CASES_DIR", "MOE_HARNESS_BIN")}
env.update(MOE_BUILD_DIR=build, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")


def run(*cmd, cwd=work):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def check(ok, what, out=""):
    if not ok:
        sys.exit(f"FAIL: {what}\n{out[-3000:]}")


rc, out = run(py, "-m", "pip", "install", "--no-build-isolation", root)
check(rc == 0, f"pip install gave {rc}", out)

version = re.search(r"project\(moe_harness VERSION ([0-9.]+)", open(os.path.join(root, "CMakeLists.txt")).read())[1]
rc, out = run(cli, "--version", cwd="/")
check(rc == 0 and out.startswith(f"moe-harness {version} "), f"moe-harness --version gave {rc}, not {version}", out)

site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env=env,
                      capture_output=True, text=True, check=True).stdout.strip()
check(site.startswith(venv), f"the venv's site-packages {site} is outside {venv}")
check(os.path.isfile(os.path.join(site, "moe_harness", "_native", "share", "moe-harness", "cases", "smoke.yaml")),
      "the wheel ships no suites beside the CLI")
rc, out = run(py, "-c", "import moe_harness; print(moe_harness.__file__); print(len(moe_harness.suite('smoke')))",
              cwd="/")
check(rc == 0 and out.splitlines()[0].startswith(os.path.join(site, "moe_harness")),
      f"import moe_harness gave {rc}, not from {site}", out)

# The plugin and export routes from the wheel alone: the ABI header it ships (--plugin-header prints its path, the
# file is the source tree's), and the NumPy safetensors reader/writer.
rc, out = run(cli, "--plugin-header", cwd="/")
header = out.strip()
check(rc == 0 and header.startswith(site) and open(header).read() == open(os.path.join(root, "kernels", "plugin",
                                                                                       "moe_plugin.h")).read(),
      f"moe-harness --plugin-header gave {rc}: {out!r}, not the shipped copy of kernels/plugin/moe_plugin.h", out)
rc, out = run(py, "-c", "import moe_harness.safetensors as s; print(s.__file__)", cwd="/")
check(rc == 0 and out.startswith(site), f"import moe_harness.safetensors gave {rc}", out)
# What the CLI prints names `moe-harness` (the console script), never the binary inside the package: the usage line
# of an unknown option, the closest subcommand of a typo, and the rerun command of a failing case.
rc, out = run(cli, "run", "--no-such-option", cwd="/")
check(rc == 2 and "_native/bin" not in out, f"run --no-such-option gave {rc}, or named the package's binary", out)
rc, out = run(cli, "runn", cwd="/")
check(rc == 2 and "unknown subcommand 'runn': did you mean 'run'?" in out, f"moe-harness runn gave {rc}", out)
rc, out = run(cli, "run", "--suite", "smoke", "--filter", "*/T3/*", "--kernel", "host-contract~gate_up_swapped",
              "--report-dir", os.path.join(work, "rep"), cwd=work)
reruns = re.findall(r"^\s+rerun: (.+)$", out, re.M)
check(rc == 1 and reruns and all(r.startswith(f"{cli} run --suite smoke ") for r in reruns)
      and "_native/bin" not in out,
      f"a failing run from the console script gave {rc}; its rerun commands must start with {cli}", out)

tests = os.path.join(work, "t")
os.makedirs(tests)
shutil.copy(os.path.join(root, "harness", "python", "examples", "test_host_kernel.py"), tests)
args = ["-m", "pytest", "-p", "no:cacheprovider", "--moe-suite", "smoke", "--moe-filter", "*/T3/*", "test_host_kernel.py"]
rc, out = run(py, *args, cwd=tests)
passed = re.search(r"\b(\d+) passed", out)
check(rc == 0 and passed and int(passed[1]) > 0 and " failed" not in out,
      f"pytest without -p gave {rc}, no passing test", out)
rc, out = run(py, *args[:4], "-p", "no:moe_harness.pytest_plugin", *args[4:], cwd=tests)
check(rc != 0 and "--moe-suite" in out, f"pytest with the entry point turned off gave {rc}", out)
print(f"pip install ok: moe-harness {version}, import from {site}, pytest without -p: {passed[1]} passed")
