#!/usr/bin/env python3
"""`moe-harness --version` and every report name the source tree the binary was built from.

The expectation comes from git itself (an independent source): the checkout's commit, `git rev-parse --short=12
HEAD`; and, when `git status --porcelain` lists a tracked change or an untracked, not-ignored file, the suffix
"+dirty." and 12 hex digits. Outside a git checkout, "unknown". CMake writes the stamp at every build, so a build from this checkout must carry it
(a test run after further edits, without rebuilding, fails here: the binary no longer is the tree).
A report written by `run`, and the JSON tables of `calibrate` and `selftest`, must carry the same stamp.

Usage: check_build_stamp.py MOE_HARNESS SOURCE_ROOT OUT_DIR
"""
import json
import re
import shutil
import subprocess
import sys


def main() -> int:
    harness, root, out = sys.argv[1], sys.argv[2], sys.argv[3]

    def git(*args: str):
        try:
            r = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True)
        except FileNotFoundError:  # no git at all
            return None
        return r.stdout if r.returncode == 0 else None

    head = git("rev-parse", "--short=12", "HEAD")
    if head is None:  # not a git checkout (an unpacked tarball): the stamp says so
        commit, dirty, pattern = "no git checkout", False, "unknown"
    else:
        commit = head.strip()
        dirty = git("status", "--porcelain", "--untracked-files=all").strip() != ""
        pattern = re.escape(commit) + (r"\+dirty\.[0-9a-f]{12}" if dirty else "")

    v = subprocess.run([harness, "--version"], capture_output=True, text=True)
    if v.returncode != 0:
        print(f"--version exited {v.returncode}: {v.stderr}")
        return 1
    m = re.fullmatch(r"moe-harness (\S+) \((\S+)\)", v.stdout.strip())
    if not m or not re.fullmatch(pattern, m.group(2)):
        print(f"--version printed {v.stdout.strip()!r}; git says the tree is {commit}{' (dirty)' if dirty else ''}")
        return 1
    stamp = m.group(2)

    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([harness, "run", "--suite", "smoke", "--kernel", "host", "--filter", "*T1/*",
                        "--report-dir", out], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"run exited {r.returncode}: {r.stdout[-2000:]}{r.stderr[-2000:]}")
        return 1
    with open(f"{out}/report.json") as f:
        prov = json.load(f)["provenance"]
    if prov["harness_commit"] != stamp or prov["harness_version"] != m.group(1):
        print(f"report provenance {prov['harness_version']} ({prov['harness_commit']}); --version {v.stdout.strip()}")
        return 1
    # calibrate's and selftest's JSON tables (committed under harness/calibration/ and in run logs) carry it too.
    for cmd in (["calibrate", "--suite", "smoke", "--filter", "*T1/decode/atomic", "--seeds", "1"],
                ["selftest", "--seeds", "1"]):
        j = f"{out}/{cmd[0]}.json"
        r = subprocess.run([harness, *cmd, "--json", j], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{cmd[0]} exited {r.returncode}: {r.stdout[-2000:]}{r.stderr[-2000:]}")
            return 1
        with open(j) as f:
            got = json.load(f).get("harness_commit")
        if got != stamp:
            print(f"{cmd[0]} --json wrote harness_commit {got!r}; --version says {stamp}")
            return 1
    print(f"build stamp {stamp} (git: {commit}{', dirty' if dirty else ''}) in --version, the report, calibrate and selftest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
