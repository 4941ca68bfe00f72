#!/usr/bin/env python3
"""Hostile inputs of issue 48 (part B) that need the whole CLI, one ITEM a ctest test, each asserting the exit code
README "Exit codes" and docs/reliability.md document and what must (not) be left on disk.

  write_failures   `run` whose report writes fail part-way (a file size limit, RLIMIT_FSIZE, as a full disk does):
                   exit 3 or, where everything fit, 0; never a temporary file (`*.tmp.PID`) left beside the reports,
                   never a truncated junit.xml
  device_plugin    a device-memory plugin on this CPU build: its cases skip (exit 4, nothing checked); with
                   --require-device each is a gating failure, exit 1, as a missing device is
  floor            an activation amax floor that zeroes the contract reference (`quant.amax_floor: 9e29`, the
                   documented bound 1e30, one that zeroes only the intermediate (2e6), `judge --contract token_floor=1e29`):
                   bad input, exit 2 naming the floor's key (`run`, `report DIR`: the case's record is an error with
                   failed_check bad_input; `judge`: before any work), never the seed; the bound itself loads
  floor_export     `export --suite` of such cases: exit 2, each listed in index.json as not exported with its reason
                   (the floor's key, the suite's line) and failed_check bad_input, the good case exported; a case the
                   host cannot build beside them (an address-space limit) is failed_check harness_error and the exit
                   stays 2 (bad input wins over a harness error, as in `run`); `export CASE` of one: exit 2 naming it
  floor_judge_dir  `judge --dir` on that export: exit 2, the case not exported for its floor an error record with
                   failed_check bad_input, the other case judged (pass), also with --recompute; a case exported clean but
                   judged under `--contract token_floor=1e29` (recomputed through the pipeline): bad_input, exit 2

Usage: check_hostile_round3.py MOE_HARNESS KERNELS_BUILD_DIR WORK_DIR ITEM
"""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys

TIMEOUT = 300


def run(args, limit=None):
    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as ENOSPC would
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT,
                          preexec_fn=limited if limit else None)


def write_failures(exe, kernels, work):
    base = [exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", "*T1/*", "--no-timing"]
    outcomes = set()
    for limit in (512, 4096, 32768, 262144, 1 << 22):
        d = f"{work}/limit{limit}"
        r = run(base + ["--report-dir", d], limit)
        assert r.returncode in (0, 3), (limit, r.returncode, r.stdout[-1500:], r.stderr[-1500:])
        outcomes.add(r.returncode)
        left = [f for f in os.listdir(d) if ".tmp." in f] if os.path.isdir(d) else []
        assert not left, (limit, left, r.stderr[-1500:])
        junit = f"{d}/junit.xml"
        if os.path.exists(junit):
            assert open(junit).read().endswith("</testsuites>\n"), (limit, "truncated junit.xml")
        if r.returncode == 3:
            assert "File too large" in r.stderr + r.stdout or "full disk" in r.stderr + r.stdout, \
                (limit, "the failed write is not named", r.stdout[-800:], r.stderr[-1500:])
    assert outcomes == {0, 3}, f"the limits must cover a failing and a fitting run: {outcomes}"
    print("write_failures: exit 3 where a write failed, 0 where all fit; no temporary file left, no truncated junit")


def device_plugin(exe, kernels, work):
    plugin = f"{kernels}/libmoe_test_plugin_abi_device.so"
    base = [exe, "run", "--suite", "smoke", "--filter", "*T1/*", "--plugin", plugin]
    r = run(base + ["--report-dir", f"{work}/skipped"])
    assert r.returncode == 4 and "needs a GPU build" in r.stdout, (r.returncode, r.stdout[-1500:], r.stderr[-800:])
    r = run(base + ["--require-device", "--report-dir", f"{work}/required"])
    assert r.returncode == 1, (r.returncode, r.stdout[-1500:], r.stderr[-800:])
    assert "--require-device" in r.stdout and "needs a GPU build" in r.stdout, r.stdout[-1500:]
    print("device_plugin: skipped without --require-device (exit 4), a gating failure with it (exit 1)")


def floor(exe, kernels, work):
    suite = f"{work}/floor.yaml"
    with open(suite, "w") as f:
        f.write("suite: floor\ndefaults: {hidden: 64, inter: 64, experts: 8, topk: 2, tokens: 2}\ncases:\n"
                "  - {quant: {weight: fp8_channel, act: fp8_token, amax_floor: 9e29}}\n"
                "  - {quant: {weight: fp8_channel, act: fp8_token, amax_floor: 1e30}}\n"
                "  - {quant: {weight: fp8_channel, act: fp8_token, amax_floor: 2e6}}\n"
                "  - {quant: {weight: fp8_channel, act: fp8_token}}\n")
    r = run([exe, "list", "--suite", suite])
    ids = [l.split()[0] for l in r.stdout.splitlines() if l.startswith("custom-")]
    assert r.returncode == 0 and len(ids) == 4 and "-fl1e+30" in ids[1], (r.returncode, r.stdout, r.stderr[-800:])
    d = f"{work}/run"
    r = run([exe, "run", "--suite", suite, "--kernel", "host", "--no-timing", "--report-dir", d])
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr[-800:])
    cases = {c["id"]: c for c in json.load(open(f"{d}/report.json"))["cases"]}
    for i in ids[:3]:
        c = cases[i]
        assert c["status"] == "error" and c["failed_check"] == "bad_input", (i, c["status"], c["failed_check"])
        assert "key 'quant.amax_floor'" in c["reason"] and "seed" not in c["reason"].split("Fix:")[-1], c["reason"]
    # found by its reference, named at its line
    assert "rounds every activation to 0" in cases[ids[2]]["reason"] and "floor.yaml:6" in cases[ids[2]]["reason"], \
        cases[ids[2]]["reason"]
    assert cases[ids[3]]["status"] == "pass", cases[ids[3]]
    r = run([exe, "report", d])
    assert r.returncode == 2, (r.returncode, r.stdout[-1500:], r.stderr[-800:])
    out = f"{work}/o.safetensors"
    open(out, "wb").close()
    r = run([exe, "judge", ids[3], "--suite", suite, "--contract", "token_floor=1e29", "--output", out,
             "--report-dir", f"{work}/judge"])
    assert r.returncode == 2 and "key '--contract'" in r.stderr and "token_floor=" in r.stderr, \
        (r.returncode, r.stdout[-800:], r.stderr[-1500:])
    assert not os.path.exists(f"{work}/judge/report.json"), "judge wrote a report before refusing its contract"
    print("floor: exit 2 naming quant.amax_floor (run, report) and --contract (judge, before any work); 1e30 loads")


FLOOR_SUITE = ("suite: floor\ndefaults: {hidden: 64, inter: 64, experts: 8, topk: 2, tokens: 2}\ncases:\n"
               "  - {quant: {weight: fp8_channel, act: fp8_token, amax_floor: 9e29}}\n"
               "  - {quant: {weight: fp8_channel, act: fp8_token, amax_floor: 2e6}}\n"
               "  - {quant: {weight: bf16, act: none}}\n")


def listed(exe, suite, n):
    r = run([exe, "list", "--suite", suite])
    ids = [l.split()[0] for l in r.stdout.splitlines() if l.startswith("custom-")]
    assert r.returncode == 0 and len(ids) == n, (r.returncode, r.stdout, r.stderr[-800:])
    return ids


def floor_export(exe, kernels, work):
    suite = f"{work}/floor.yaml"
    open(suite, "w").write(FLOOR_SUITE)
    ids = listed(exe, suite, 3)
    ex = f"{work}/ex"
    r = run([exe, "export", "--suite", suite, "--out", ex])
    assert r.returncode == 2, (r.returncode, r.stdout[-1500:], r.stderr[-1500:])
    assert "key 'quant.amax_floor'" in r.stderr, r.stderr[-1500:]
    entries = {e["id"]: e for e in json.load(open(f"{ex}/index.json"))["cases"]}
    for i, line in ((ids[0], 4), (ids[1], 5)):  # the floor zeroes every input / only the reference
        e = entries[i]
        assert e["exported"] is False and e["failed_check"] == "bad_input" and "dir" not in e, e
        assert "key 'quant.amax_floor'" in e["reason"] and f"floor.yaml:{line}" in e["reason"], e["reason"]
    assert entries[ids[2]]["exported"] is True, entries[ids[2]]
    assert sorted(os.listdir(ex)) == sorted([entries[ids[2]]["dir"], "index.json"]), os.listdir(ex)
    # One case: bad input of the command, naming the floor at its line, nothing written.
    r = run([exe, "export", ids[0], "--suite", suite, "--out", f"{work}/one"])
    assert r.returncode == 2 and "key 'quant.amax_floor'" in r.stderr and "floor.yaml:4" in r.stderr, \
        (r.returncode, r.stderr[-1500:])
    assert not os.path.exists(f"{work}/one/fixture.safetensors")
    # Beside a case the host cannot build (its 4 GiB w13 under a 3 GiB address-space limit): that one is a harness
    # error in the index, and the exit is 2, as `run` gives bad input before errors.
    both = f"{work}/both.yaml"
    open(both, "w").write(FLOOR_SUITE.split("  - {quant: {weight: fp8_channel, act: fp8_token, amax_floor: 2e6}}")[0] +
                          "  - {hidden: 4096, inter: 4096, experts: 64, topk: 4, tokens: 3}\n")
    floored, big = listed(exe, both, 2)
    limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # noqa: E731
    r = subprocess.run([exe, "export", "--suite", both, "--out", f"{work}/ex-both"], capture_output=True, text=True,
                       timeout=TIMEOUT, preexec_fn=limit)
    assert r.returncode == 2, (r.returncode, r.stderr[-1500:])
    entries = {e["id"]: e for e in json.load(open(f"{work}/ex-both/index.json"))["cases"]}
    assert entries[floored]["failed_check"] == "bad_input", entries[floored]
    assert entries[big]["failed_check"] == "harness_error" and "out of host memory" in entries[big]["reason"], \
        entries[big]
    print("floor_export: exit 2, the floored cases listed not exported with failed_check bad_input and "
          "quant.amax_floor at their lines; with a harness error beside them still 2")


def floor_judge_dir(exe, kernels, work):
    runner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "external",
                          "numpy_runner.py")
    suite = f"{work}/floor.yaml"
    open(suite, "w").write(FLOOR_SUITE)
    ids = listed(exe, suite, 3)
    ex = f"{work}/ex"
    r = run([exe, "export", "--suite", suite, "--filter", ids[0], "--filter", ids[2], "--out", ex])
    assert r.returncode == 2, (r.returncode, r.stderr[-1500:])
    good = {e["id"]: e for e in json.load(open(f"{ex}/index.json"))["cases"]}[ids[2]]["dir"]
    r = run([sys.executable, runner, f"{ex}/{good}", f"{ex}/{good}/out.safetensors"])
    assert r.returncode == 0, r.stderr[-1500:]
    for extra in ([], ["--recompute"]):
        rep = f"{work}/rep-recompute" if extra else f"{work}/rep"
        r = run([exe, "judge", "--dir", ex, "--report-dir", rep] + extra)
        assert r.returncode == 2, (extra, r.returncode, r.stdout[-1500:], r.stderr[-1500:])
        cases = {c["id"]: c for c in json.load(open(f"{rep}/report.json"))["cases"]}
        c = cases[ids[0]]
        assert c["status"] == "error" and c["failed_check"] == "bad_input", (extra, c)
        assert c["reason"].startswith("not exported: ") and "key 'quant.amax_floor'" in c["reason"], c["reason"]
        assert cases[ids[2]]["status"] == "pass", (extra, cases[ids[2]])
    # A case exported clean, judged under a declared floor that zeroes every input: its reference is recomputed
    # (another contract than the export's) and the pipeline finds the floor: bad input of the case.
    ex2 = f"{work}/ex-clean"
    fp8 = "  - {quant: {weight: fp8_channel, act: fp8_token}}\n"
    suite2 = f"{work}/clean.yaml"
    open(suite2, "w").write(FLOOR_SUITE.split("  - {")[0] + fp8)
    (cid,) = listed(exe, suite2, 1)
    r = run([exe, "export", "--suite", suite2, "--out", ex2])
    assert r.returncode == 0, (r.returncode, r.stderr[-1500:])
    (entry,) = json.load(open(f"{ex2}/index.json"))["cases"]
    d = f"{ex2}/{entry['dir']}"
    import numpy as np  # only this item needs NumPy (as the example runner does)
    sys.path.insert(0, os.path.dirname(runner))
    import numpy_runner  # the example runner's safetensors reader and writer
    _, meta = numpy_runner.read_safetensors(f"{d}/fixture.safetensors")
    numpy_runner.write_safetensors(f"{d}/out.safetensors", {"out": ("BF16", np.zeros((2, 64), np.uint16))},
                                   {"moe.case_id": cid, "moe.fixture_fingerprint": meta["moe.fixture_fingerprint"]})
    rep = f"{work}/rep-contract"
    r = run([exe, "judge", "--dir", ex2, "--contract", "token_floor=1e29", "--report-dir", rep])
    assert r.returncode == 2, (r.returncode, r.stdout[-1500:], r.stderr[-1500:])
    (c,) = json.load(open(f"{rep}/report.json"))["cases"]
    assert c["status"] == "error" and c["failed_check"] == "bad_input", c
    assert "key 'rounding_contract'" in c["reason"] and "token_floor=" in c["reason"], c["reason"]
    print("floor_judge_dir: exit 2, the case not exported for its floor an error record bad_input (also with "
          "--recompute), the other judged; a declared zeroing floor on a clean export: bad_input, exit 2")


def main():
    exe, kernels, work, item = sys.argv[1:5]
    work = f"{work}/{item}"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    {"write_failures": write_failures, "device_plugin": device_plugin, "floor": floor, "floor_export": floor_export,
     "floor_judge_dir": floor_judge_dir}[item](exe, kernels, work)


if __name__ == "__main__":
    main()
