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


def main():
    exe, kernels, work, item = sys.argv[1:5]
    work = f"{work}/{item}"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    {"write_failures": write_failures, "device_plugin": device_plugin, "floor": floor}[item](exe, kernels, work)


if __name__ == "__main__":
    main()
