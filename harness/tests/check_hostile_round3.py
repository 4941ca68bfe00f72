#!/usr/bin/env python3
"""Hostile inputs of issue 48 (part B) that need the whole CLI, one ITEM a ctest test, each asserting the exit code
README "Exit codes" and docs/reliability.md document and what must (not) be left on disk.

  write_failures   `run` whose report writes fail part-way (a file size limit, RLIMIT_FSIZE, as a full disk does):
                   exit 3 or, where everything fit, 0; never a temporary file (`*.tmp.PID`) left beside the reports,
                   never a truncated junit.xml
  device_plugin    a device-memory plugin on this CPU build: its cases skip (exit 4, nothing checked); with
                   --require-device each is a gating failure, exit 1, as a missing device is

Usage: check_hostile_round3.py MOE_HARNESS KERNELS_BUILD_DIR WORK_DIR ITEM
"""
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


def main():
    exe, kernels, work, item = sys.argv[1:5]
    work = f"{work}/{item}"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    {"write_failures": write_failures, "device_plugin": device_plugin}[item](exe, kernels, work)


if __name__ == "__main__":
    main()
