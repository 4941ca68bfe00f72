#!/usr/bin/env python3
"""Cases the kernel declines in a selftest (docs/judging.md "Token probes", the selftest's liveness):

- a clean run the kernel declines (a skip: here the host kernel's FLOP budget) is neither a clean run nor a false
  alarm, and the table names it;
- a mutant whose every case is declined is "not reached", listed with the kernel's reason, and does not fail the
  selftest (the GPU kernels decline the duplicate_id edge, the one feature duplicate_slot_dropped breaks);
- a selftest whose kernel declined every case of its suite judged nothing there: FAIL, exit 1 (the call sequence's
  clean steps, which every selftest runs, do not make up for it).

The suite is cases/selftest.yaml with its duplicate_id cases moved above the host kernel's default budget (4e9 FLOP).

Usage: check_selftest_declined.py MOE_HARNESS SUITES_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

BIG = "{hidden: 8192, inter: 8192, tokens: 64, routing: {edge: duplicate_id}}"  # 2*64*4*3*8192^2 = 1e14 FLOP


def main():
    exe, suites, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    with open(os.path.join(suites, "selftest.yaml")) as f:
        lines = f.read().splitlines()
    kept = [l for l in lines if "duplicate_id" not in l]
    assert len(kept) < len(lines), "cases/selftest.yaml has no duplicate_id case left to move"
    mixed = os.path.join(work, "mixed.yaml")
    with open(mixed, "w") as f:
        f.write("\n".join(kept).replace("suite: selftest", "suite: selftest-declined") + f"\n  - {BIG}\n")

    table = os.path.join(work, "mixed.json")
    r = subprocess.run([exe, "selftest", "--suite", mixed, "--seeds", "1", "--json", table],
                       capture_output=True, text=True)
    out = r.stdout
    assert r.returncode == 0, f"exit {r.returncode}, want 0\n{out}\n{r.stderr[-2000:]}"
    assert "selftest: PASS" in out, out
    line = next((l for l in out.splitlines() if "duplicate_slot_dropped: not reached" in l), "")
    assert "(the host kernel declines every case it applies to: " in line and "above the host kernel's budget" in line, out
    assert "declined by the kernel: " in out and "above the host kernel's budget" in out, out
    j = json.load(open(table))
    d = j["mutants"]["duplicate_slot_dropped"]
    assert d["applies"] == 1 and d["declined"] == 1 and d["live"] == 0 and d["caught"] == 0, d
    assert len(j["clean_declined"]) == 1 and j["clean_failures"] == 0, j["clean_declined"]
    # Every other mutant reached its cases as before (none declined on the cases the host kernel runs).
    for name, m in j["mutants"].items():
        if name != "duplicate_slot_dropped":
            assert m["declined"] < m["applies"] or m["applies"] == 0, (name, m)

    only = os.path.join(work, "only.yaml")
    with open(only, "w") as f:
        f.write(f"suite: selftest-only-declined\ndefaults: {{experts: 16, topk: 4}}\ncases:\n  - {BIG}\n")
    r = subprocess.run([exe, "selftest", "--suite", only, "--seeds", "1"], capture_output=True, text=True)
    assert r.returncode == 1 and "selftest: FAIL" in r.stdout, f"exit {r.returncode}\n{r.stdout}\n{r.stderr[-2000:]}"
    # The clean runs left are the call sequence's steps (cases/selftest-sequence.yaml), which every selftest runs.
    with open(os.path.join(suites, "selftest-sequence.yaml")) as f:
        steps = sum(1 for l in f if l.startswith("  - "))
    assert f"clean false alarms ({steps})" in r.stdout and f"{steps} clean runs" in r.stdout, r.stdout
    print("check_selftest_declined: ok")


if __name__ == "__main__":
    main()
