#!/usr/bin/env python3
"""Plugin ABI negotiation through `moe-harness run --plugin PATH` (kernels/plugin/tests/abi_plugin.c): a plugin that
answers only version 1 loads in this version 2 harness and passes the smoke cases the version 2 example passes; a
plugin serving both versions gets its version 2 table, whose rounding contract (gate_up=bf16,slot=bf16, what that
build computes) is the one the case is judged against: the exact-tier case passes only under it; tables of a newer
version, shorter than their version's or with an unknown memory kind are bad input (exit 2) naming the numbers, and
no report directory is written; in a host build a device-memory plugin is declined on every case because it needs a
GPU build, and the run checked nothing (exit 4), never a pass.

Usage: check_plugin_abi.py MOE_HARNESS PLUGIN_DIR WORK_DIR host|gpu
"""
import json
import os
import shutil
import subprocess
import sys


def run(exe, suite, plugin, rep):
    r = subprocess.run([exe, "run", "--suite", suite, "--plugin", plugin, "--report-dir", rep],
                       capture_output=True, text=True, timeout=300)
    report = json.load(open(f"{rep}/report.json")) if os.path.exists(f"{rep}/report.json") else None
    return r, report


def main():
    exe, plugins, work, build = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    lib = lambda mode: f"{plugins}/libmoe_test_plugin_abi_{mode}.so"

    r, example = run(exe, "smoke", f"{plugins}/libmoe_example_plugin.so", f"{work}/example")
    assert r.returncode == 0, r.stdout[-3000:]
    want = {c["id"] for c in example["cases"] if c["status"] == "pass"}
    r, v1 = run(exe, "smoke", lib("v1_only"), f"{work}/v1_only")
    assert r.returncode == 0, (r.returncode, r.stdout[-3000:], r.stderr[-2000:])
    assert {c["id"] for c in v1["cases"] if c["status"] == "pass"} == want
    assert [k["version"][:3] for k in v1["provenance"]["kernels"]] == ["1.0"], v1["provenance"]["kernels"]

    suite = f"{work}/contract.yaml"
    open(suite, "w").write("suite: contract\ncases:\n"
                           "  - {hidden: 136, inter: 128, experts: 8, topk: 2, tokens: 4, tier: exact, routing: {kind: precomputed}}\n"
                           "  - {hidden: 256, inter: 256, experts: 8, topk: 2, tokens: 16}\n")
    r, both = run(exe, suite, lib("both"), f"{work}/both")
    assert r.returncode == 0, (r.returncode, r.stdout[-3000:], r.stderr[-2000:])
    assert [k["version"][:3] for k in both["provenance"]["kernels"]] == ["2.0"], both["provenance"]["kernels"]
    for c in both["cases"]:
        assert c["status"] == "pass", c["reason"]
        assert c["rounding_contract"]["effective"] == "gate_up=bf16,slot=bf16", c["rounding_contract"]
        assert c["rounding_contract"]["source"] == "kernel", c["rounding_contract"]

    for mode, text in [("newer", "plugin ABI version 3 but this harness speaks versions 1 to 2"),
                       ("short", "version 2 needs"),
                       ("bad_memory", "the plugin's memory is 7"),
                       ("device_no_run", "declares device memory but lacks run_device")]:
        r, _ = run(exe, "smoke", lib(mode), f"{work}/{mode}")
        assert r.returncode == 2 and text in r.stderr, (mode, r.returncode, r.stderr[-2000:])
        assert not os.path.exists(f"{work}/{mode}"), mode

    if build == "host":
        r, dev = run(exe, "smoke", lib("device"), f"{work}/device")
        assert r.returncode == 4, (r.returncode, r.stdout[-3000:], r.stderr[-2000:])
        assert dev["cases"] and all(c["status"] == "skip" for c in dev["cases"])
        assert all("needs a GPU build of moe-harness" in c["reason"] for c in dev["cases"]), dev["cases"][0]["reason"]
    print(f"plugin abi ok: version 1 plugin passed {len(want)}, version 2 contract from the table, 4 refusals"
          + (", device plugin declined in a host build" if build == "host" else ""))


if __name__ == "__main__":
    main()
