#!/usr/bin/env python3
"""The CI workflow examples in ci/workflows/ stay runnable: each is valid YAML with jobs and steps, every repository
script a step calls exists and is executable by bash, every `moe-harness SUBCOMMAND` and option it uses is one the
built CLI accepts, and every suite or resource file it names exists. Then what they promise (ci_workflow_promises.py: each
architecture's nightly baseline moves only by the promote workflow; pr-cpu claims no check its container cannot run).

Usage: check_ci_workflows.py MOE_ROOT MOE_HARNESS
"""
import glob
import os
import re
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ci_workflow_promises  # noqa: E402


def main():
    root, exe = sys.argv[1], sys.argv[2]
    files = sorted(glob.glob(f"{root}/ci/workflows/*.yml"))
    assert len(files) >= 3, files
    checked = 0
    for f in files:
        wf = yaml.safe_load(open(f))
        assert wf.get("name") and wf.get("jobs"), f
        for job, spec in wf["jobs"].items():
            steps = spec.get("steps") or []
            assert steps, (f, job)
            for st in steps:
                run = st.get("run", "")
                for script in re.findall(r"\bci/[\w./-]+", run):
                    assert os.path.isfile(f"{root}/{script}"), (f, script)
                    checked += 1
                for cmd in re.findall(r"moe-harness (\w+)([^\n]*)", run):
                    sub, rest = cmd
                    help_text = subprocess.run([exe, sub, "--help"], capture_output=True, text=True)
                    assert help_text.returncode == 0, (f, sub, help_text.stderr)
                    for opt in re.findall(r"(--[a-z][\w-]*)", rest):
                        assert opt in help_text.stdout, (f, sub, opt)
                    for path in re.findall(r"\b(cases/[\w.-]+\.yaml)", rest):
                        assert os.path.isfile(f"{root}/{path}"), (f, path)
                    checked += 1
                for opt in re.findall(r"ci/nightly[^\n]*", run):
                    usage = open(f"{root}/ci/nightly").read()
                    for o in re.findall(r"(--[a-z][\w-]*)", opt):
                        assert f"{o})" in usage, (f, "ci/nightly", o)
    print(f"workflows ok: {len(files)} files, {checked} references checked")
    ci_workflow_promises.check(root, exe)


if __name__ == "__main__":
    main()
