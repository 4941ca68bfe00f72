#!/usr/bin/env python3
"""Call sequences end to end (docs/judging.md "Call sequences") on the host kernel:

- cases/sequence.yaml: 5 steps, every one passes on the clean kernel, ids s00/.. s04/ in file order;
- host-contract~workspace_init_once through it fails exactly steps 1, 2, 3 (computed from the shapes: the first call
  has T = 1, so every element past 1 x 512 is stale once a call of T = 300 or 16 ran before it on the same kernel
  object; step 1's judged run reads fresh zeros, its rerun what the judged run left; step 4, T = 1, is cleared);
- a failed step's rerun command selects every step up to it and reproduces the failure;
- host-contract~last_token_unwritten fails every step (its last row keeps the sentinel or the previous step's bytes);
- cases/sequence-shuffled.yaml runs in the order an independent Philox4x32-10 Fisher-Yates gives for its seed, and
  --sequence-seed replays another; provenance.sequence and stderr carry the seed;
- --jobs 2 and --gtest_shuffle are usage errors (exit 2) for a sequence.

Usage: check_sequence.py MOE_HARNESS WORK_DIR
"""
import json
import os
import re
import shlex
import subprocess
import sys

EXE, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
M32 = 0xFFFFFFFF


def philox(ctr, key):  # Philox4x32-10 (Salmon et al. 2011), written from the paper's constants
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ c3 ^ k1) & M32, p0 & M32
    return c0


def shuffled(n, seed):
    v = list(range(n))
    for i in range(n - 1, 0, -1):
        j = philox((i, 0, 0, 0), (seed & M32, seed >> 32)) % (i + 1)
        v[i], v[j] = v[j], v[i]
    return v


def run(name, *args):
    out = os.path.join(WORK, name)
    p = subprocess.run([EXE, "run", "--report-dir", out, *args], capture_output=True, text=True)
    rep = json.load(open(os.path.join(out, "report.json"))) if os.path.exists(os.path.join(out, "report.json")) else None
    return p, rep


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


p, rep = run("clean", "--suite", "sequence", "--kernel", "host-contract")
check(p.returncode == 0, f"clean sequence exit {p.returncode}: {p.stderr[-2000:]}")
ids = [c["id"] for c in rep["cases"]]
check(len(ids) == 5 and all(i.startswith(f"s{k:02d}/") for k, i in enumerate(ids)), f"step ids {ids}")
check(all(c["status"] == "pass" for c in rep["cases"]), "every clean step passes")
check([c["metrics"]["sequence_step"] for c in rep["cases"]] == [0, 1, 2, 3, 4], "metrics.sequence_step")
check([c["metrics"]["sequence_fresh_kernel"] for c in rep["cases"]] == [1, 0, 0, 0, 0], "only step 0 on a fresh object")
check(rep["provenance"].get("sequence") == "scripted", "provenance.sequence")

p, rep = run("ws", "--suite", "sequence", "--kernel", "host-contract~workspace_init_once")
check(p.returncode == 1, f"workspace_init_once exit {p.returncode}")
check([c["status"] for c in rep["cases"]] == ["pass", "fail", "fail", "fail", "pass"],
      f"workspace_init_once fails steps 1-3: {[c['status'] for c in rep['cases']]}")
check(rep["cases"][1]["failed_check"] == "rerun", "step 1 caught by its rerun")
# A step's rerun command replays every step up to it on one kernel object (alone, step 2 would pass: its T = 16
# would be the first call's size), and reproduces its failure.
line = next((l for l in p.stdout.splitlines() if "rerun:" in l and "/s02/" not in l and "s02/" in l), "")
cmd = shlex.split(line.split("rerun:", 1)[1]) if line else []
filters = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--filter"]
check([f[:4] for f in filters] == ["s00/", "s01/", "s02/"], f"step 2's rerun selects steps 0-2: {filters}")
if cmd:
    r = subprocess.run(cmd + ["--report-dir", os.path.join(WORK, "ws-rerun")], capture_output=True, text=True)
    rr = json.load(open(os.path.join(WORK, "ws-rerun", "report.json")))
    check([c["status"] for c in rr["cases"]] == ["pass", "fail", "fail"], f"the rerun reproduces step 2: {r.stdout[-800:]}")

p, rep = run("ltu", "--suite", "sequence", "--kernel", "host-contract~last_token_unwritten")
check(p.returncode == 1 and all(c["status"] == "fail" for c in rep["cases"]), "last_token_unwritten fails every step")

for seed in (None, 12345):
    extra = [] if seed is None else ["--sequence-seed", str(seed)]
    p, rep = run(f"shuffled-{seed}", "--suite", "sequence-shuffled", "--kernel", "host-contract", *extra)
    s = 1 if seed is None else seed
    check(p.returncode == 0, f"shuffled seed {s} exit {p.returncode}: {p.stderr[-2000:]}")
    check(f"seed {s} (replay: --sequence-seed {s})" in p.stderr, f"stderr names seed {s}")
    check(rep["provenance"].get("sequence") == f"shuffled, seed {s}", f"provenance.sequence for seed {s}")
    # The file's steps by token count and format: T1 bf16, T300 bf16, T16 fp8blk, T300 mxfp4 s2, T1 bf16, T5, T64.
    file_steps = ["T1/", "T300/", "T16/", "T300/", "T1/", "T5/", "T64/"]
    want = [file_steps[i] for i in shuffled(7, s)]
    got = [re.search(r"/(T\d+/)", c["id"]).group(1) for c in rep["cases"]]
    check(got == want, f"seed {s}: order {got}, want {want}")

for args, what in ((["--jobs", "2"], "--jobs"), (["--gtest", "--gtest_shuffle"], "--gtest_shuffle")):
    p, _ = run("refused", "--suite", "sequence", "--kernel", "host-contract", *args)
    check(p.returncode == 2 and "call sequence" in p.stderr, f"{what} refused: exit {p.returncode} {p.stderr[-500:]}")

print("check_sequence:", "FAILED" if failures else "all passed")
sys.exit(1 if failures else 0)
