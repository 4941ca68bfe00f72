#!/usr/bin/env python3
"""The warning gate of ci/test (its header: "The project's C++ is built with MOE_WERROR=ON: a new warning in it fails
this script"; docs/ci.md "Testing"), checked on this build's own compile commands (ninja's compile database):

  - ci/test configures the cpu preset with -DMOE_WERROR=ON;
  - Eigen, the one third-party library whose headers the numeric code includes, comes through -isystem, never -I
    (its headers warn nowhere, so a warning in the log is the project's);
  - a translation unit of the project's own, compiled with the command of a reference/ source, that includes Eigen
    and a project header and holds one unused variable, gets exactly that one diagnostic: an error under
    MOE_WERROR=ON (and the command carries -Werror), a warning otherwise.

Usage: check_warning_gate.py MOE_ROOT BUILD_DIR NINJA MOE_WERROR(ON|OFF) WORK_DIR"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

root, build, ninja, werror, work = sys.argv[1:6]
werror = werror.upper() in ("ON", "1", "TRUE", "YES")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def check(ok, what):
    if not ok:
        sys.exit(f"FAIL: {what}")


ci_test = open(os.path.join(root, "ci", "test")).read()
check(re.search(r'^(env "\$\{cache_env\[@\]\}" )?cmake --preset cpu -DMOE_WERROR=ON\b', ci_test, re.M) is not None,
      "ci/test does not configure the cpu preset with -DMOE_WERROR=ON")

db = json.loads(subprocess.run([ninja, "-C", build, "-t", "compdb"], check=True, capture_output=True,
                               text=True).stdout)
reference = [e for e in db if e["file"].startswith(os.path.join(root, "reference", "")) and
             e["file"].endswith(".cpp") and "/tests/" not in e["file"] and "/bench/" not in e["file"]]
check(reference, f"no reference/ source in {build}'s compile database")
for e in reference:
    check(re.search(r"-I\s*\S*eigen3", e["command"]) is None, f"{e['file']}: Eigen included with -I: {e['command']}")
with_eigen = [e for e in reference if re.search(r"-isystem\s+\S*eigen3", e["command"])]
check(with_eigen, "no reference/ source includes Eigen through -isystem")
# One such source's command (not one with per-file warning switches, which follow -std=), less its output,
# dependency file and input.
entry = next((e for e in with_eigen if "-Wno-" not in e["command"].split("-std=")[-1]), None)
check(entry is not None, "every reference/ source that includes Eigen has per-file warning switches")
args = shlex.split(entry["command"])
if os.path.basename(args[0]) == "ccache":
    args = args[1:]
cmd, skip = [], 0
for a in args:
    if skip:
        skip -= 1
    elif a in ("-o", "-MT", "-MF"):
        skip = 1
    elif a in ("-c", "-MD", entry["file"]):
        continue
    else:
        cmd.append(a)
check(("-Werror" in cmd) == werror, f"MOE_WERROR={'ON' if werror else 'OFF'} but the command is: {entry['command']}")

probe = os.path.join(work, "warning_probe.cpp")
open(probe, "w").write('#include <Eigen/Core>\n#include "formats/fp8_quant.hpp"\n\n'
                       "int warning_probe() {\n  int unused = 1;\n  Eigen::MatrixXf m = Eigen::MatrixXf::Identity(2, 2);\n"
                       "  return int(m.sum());\n}\n")
r = subprocess.run(cmd + ["-fsyntax-only", probe], cwd=entry["directory"], capture_output=True, text=True)
diagnostics = [l for l in r.stderr.splitlines() if re.search(r"\b(warning|error):", l)]
kind = "error" if werror else "warning"
check(len(diagnostics) == 1 and diagnostics[0].startswith(f"{probe}:5:") and
      f"{kind}: unused variable" in diagnostics[0] and (r.returncode != 0) == werror,
      f"the probe's one unused variable: exit {r.returncode}, want exactly one {kind} at {probe}:5:\n{r.stderr[-3000:]}")
print(f"warning gate ok: ci/test builds with MOE_WERROR=ON; Eigen through -isystem in {len(with_eigen)} reference/ "
      f"commands; a warning in the project's code is {'an error' if werror else 'a warning'} under this build's flags")
