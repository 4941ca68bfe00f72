#!/usr/bin/env python3
"""Plugins through `moe-harness run --plugin PATH`: the in-tree C example passes every case it supports and declines
the rest with its reason; its compile-time mutant (gate/up swapped) fails every case it runs; a racy build is caught
by the rerun probe unless it declares itself non-deterministic through the ABI; a plugin that writes nothing fails
every case on unwritten elements (exit 1, never a harness error); libraries the loader
must refuse (another ABI version, no entry point, a bare name, a missing file) are bad input (exit 2) with the fix,
and no report directory is written.

Usage: check_plugin.py MOE_HARNESS PLUGIN_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys


def run(exe, plugin, rep):
    r = subprocess.run([exe, "run", "--suite", "smoke", "--plugin", plugin, "--report-dir", rep],
                       capture_output=True, text=True)
    report = json.load(open(f"{rep}/report.json")) if os.path.exists(f"{rep}/report.json") else None
    return r, report


def main():
    exe, plugins, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    r, report = run(exe, f"{plugins}/libmoe_example_plugin.so", f"{work}/ok")
    assert r.returncode == 0, r.stdout[-3000:]
    cases = report["cases"]
    assert {c["kernel"] for c in cases} == {"example-c-plugin"}
    passed = [c for c in cases if c["status"] == "pass"]
    skipped = [c for c in cases if c["status"] == "skip"]
    # The smoke suite's bf16/fp16 cases without activation quantization run; every quantized one is declined.
    assert passed and all("/bf16.a16" in c["id"] or "/fp16.a16" in c["id"] for c in passed)
    assert all(c["variant"] == "example-c/loops" for c in passed)
    assert skipped and all("bf16/fp16 weights without activation quantization only" in c["reason"] for c in skipped)
    assert len(passed) + len(skipped) == len(cases)
    assert any(k[0] == "example-c-plugin" and k[1].startswith("1.0") for k in
               [(k["id"], k["version"]) for k in report["provenance"]["kernels"]]), report["provenance"]["kernels"]

    r, report = run(exe, f"{plugins}/libmoe_example_plugin_swapped.so", f"{work}/swapped")
    assert r.returncode == 1, r.returncode
    ran = [c for c in report["cases"] if c["status"] != "skip"]
    assert len(ran) == len(passed) and all(c["status"] == "fail" for c in ran), [c["status"] for c in ran]

    # A plugin whose reruns differ in one element (as float atomics do): caught by the rerun probe when it claims
    # determinism (the default); accepted when it declares itself non-deterministic through the ABI.
    r, report = run(exe, f"{plugins}/libmoe_example_plugin_racy.so", f"{work}/racy")
    assert r.returncode == 1, r.returncode
    checks = {c["failed_check"] for c in report["cases"] if c["status"] == "fail"}
    assert checks == {"rerun"}, checks
    r, report = run(exe, f"{plugins}/libmoe_example_plugin_racy_declared.so", f"{work}/racy_declared")
    assert r.returncode == 0, r.stdout[-2000:]
    # The bit-identity and linearity probes did not run on it, and the report says so instead of 0 mismatches.
    for c in (c for c in report["cases"] if c["status"] == "pass"):
        assert c["probes"]["rerun"] == "ran", c["probes"]
        assert c["probes"]["rerun_identical"].startswith("not run: the kernel declares itself non-deterministic"), c
        assert c["probes"]["linearity_all_weights"].startswith("not run: the kernel declares itself non-det"), c
        assert "linearity_mismatches" not in c["metrics"], c["metrics"]

    # Writes nothing and says it succeeded: every case it runs fails on unwritten elements, the whole output.
    r, report = run(exe, f"{plugins}/libmoe_test_plugin_silent.so", f"{work}/silent")
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    assert report["summary"]["error"] == 0 and report["summary"]["pass"] == 0, report["summary"]
    for c in report["cases"]:
        assert c["status"] == "fail" and c["failed_check"] == "unwritten", (c["id"], c["failed_check"], c["reason"])
        assert c["metrics"]["unwritten"] >= len(c["token_cos"]) > 0, (c["id"], c["metrics"]["unwritten"])
        assert all(v is None for v in c["token_cos"]) and c["metrics"]["min_cos"] is None, c["id"]
        assert c["probes"]["rerun"] == "not run: the case failed first (unwritten)", c["probes"]

    for name, plugin, want in [
            ("wrong_abi", f"{plugins}/libmoe_test_plugin_wrong_abi.so", "plugin ABI version 999 but this harness speaks version 1"),
            ("no_entry", f"{plugins}/libmoe_test_plugin_no_entry.so", "no symbol moe_plugin_entry"),
            ("bare_name", "libmoe_example_plugin.so", "not a bare library name"),
            ("missing", f"{work}/nope.so", "no such file")]:
        r, report = run(exe, plugin, f"{work}/{name}")
        assert r.returncode == 2 and want in r.stderr, (name, r.returncode, r.stderr)
        assert not os.path.exists(f"{work}/{name}"), name
    print(f"plugins ok: {len(passed)} passed, {len(skipped)} declined; mutant failed {len(ran)}/{len(ran)}")


if __name__ == "__main__":
    main()
