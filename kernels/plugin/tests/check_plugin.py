#!/usr/bin/env python3
"""Plugins through `moe-harness run --plugin PATH`: the in-tree C example passes every case it supports and declines
the rest with its reason; its compile-time mutant (gate/up swapped) fails every case it runs; a racy build is caught
by the rerun probe unless it declares itself non-deterministic through the ABI; a plugin that writes nothing fails
every case on unwritten elements (exit 1, never a harness error); libraries the loader
must refuse (another ABI version, no entry point, a bare name, a missing file, a path that is not a regular file, a
file that is not a complete ELF shared object of this machine, an entry point that is data, an id or version that
is not UTF-8) are bad input (exit 2) with the fix, and no report directory is written; so are two kernels with one
id in a run. A decline reason that is not UTF-8 reaches the report readably. `--plugin PATH~MUTANT` wraps the example
in one of the catalog's input/output mutants, which must fail every case it runs.

Usage: check_plugin.py MOE_HARNESS PLUGIN_DIR WORK_DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys


def run(exe, plugin, rep, *args):
    try:
        r = subprocess.run([exe, "run", "--suite", "smoke", "--plugin", plugin, "--report-dir", rep, *args],
                           capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return None, None
    report = json.load(open(f"{rep}/report.json")) if os.path.exists(f"{rep}/report.json") else None
    return r, report


def broken_copies(plugins, work):
    """Files the loader must refuse before dlopen: the example plugin cut short at several lengths (inside its
    program headers, inside each loaded segment, inside the section headers at its end), a FIFO, a text file, and
    the example with its ELF machine field set to another architecture."""
    src = f"{plugins}/libmoe_example_plugin.so"
    data = open(src, "rb").read()
    truncated = []
    for n in (100, 1000, len(data) // 2, len(data) - 1):
        path = f"{work}/truncated_{n}.so"
        open(path, "wb").write(data[:n])
        truncated.append((n, path))
    fifo = f"{work}/fifo.so"
    os.mkfifo(fifo)
    text = f"{work}/text.so"
    open(text, "w").write("not a library\n")
    other = bytearray(data)
    machine = struct.unpack_from("<H", other, 18)[0]
    struct.pack_into("<H", other, 18, 183 if machine != 183 else 62)  # EM_AARCH64, or EM_X86_64 on aarch64
    other_machine = f"{work}/other_machine.so"
    open(other_machine, "wb").write(bytes(other))
    return truncated, fifo, text, other_machine


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

    # The rounding contract through the optional symbol moe_plugin_rounding_contract: the example declares that it
    # keeps h, each slot and the sum in fp32 (today's default there, so each record's contract is its case's);
    # built to round like vLLM's pipeline it declares gate_up=bf16,slot=bf16 and is judged against that, passing;
    # the same rounding without the symbol is judged as fp32 stages and fails the exact-tier case, whose slots are
    # not bf16 values (docs/numerics.md "The exact tier").
    for c in passed:
        rc = c["rounding_contract"]
        assert rc["declared"] == "gate_up=f32,slot=f32,reduce=f32" and rc["not_applied"] == "", rc
        assert (rc["effective"], rc["source"]) == ("default", "default") or rc["source"] == "case", rc
        assert ("/mid-f16/out-f16" in c["id"]) == (rc["effective"] == "act=f16,output=f16"), (c["id"], rc)
    suite = f"{work}/contract.yaml"
    open(suite, "w").write("suite: contract\ncases:\n"
                           "  - {hidden: 136, inter: 128, experts: 8, topk: 2, tokens: 4, tier: exact, routing: {kind: precomputed}}\n"
                           "  - {hidden: 256, inter: 256, experts: 8, topk: 2, tokens: 16}\n")
    for lib, code in (("vllm", 0), ("vllm_undeclared", 1)):
        rep = f"{work}/{lib}"
        r = subprocess.run([exe, "run", "--suite", suite, "--plugin", f"{plugins}/libmoe_example_plugin_{lib}.so",
                            "--report-dir", rep], capture_output=True, text=True, timeout=300)
        assert r.returncode == code, (lib, r.returncode, r.stdout[-3000:], r.stderr[-2000:])
        cases = json.load(open(f"{rep}/report.json"))["cases"]
        assert len(cases) == 2, cases
        if lib == "vllm":
            for c in cases:
                assert c["status"] == "pass", c["reason"]
                assert c["rounding_contract"]["effective"] == "gate_up=bf16,slot=bf16", c["rounding_contract"]
                assert c["rounding_contract"]["source"] == "kernel", c["rounding_contract"]
        else:
            exact = [c for c in cases if "/exact" in c["id"]][0]
            assert exact["status"] == "fail" and exact["failed_check"] == "bitwise", exact["reason"]
            assert exact["rounding_contract"]["declared"] == "gate_up=f32,slot=f32,reduce=f32", exact["rounding_contract"]

    # The catalog's input/output mutants wrap any kernel: the example plugin with its router weights handed in
    # squared fails every case it runs, named PLUGIN_ID~MUTANT; an in-kernel mutant cannot wrap it (exit 2).
    r, report = run(exe, f"{plugins}/libmoe_example_plugin.so~router_weight_twice", f"{work}/wrapped")
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    ran = [c for c in report["cases"] if c["status"] != "skip"]
    assert {c["kernel"] for c in report["cases"]} == {"example-c-plugin~router_weight_twice"}
    assert len(ran) == len(passed) and all(c["status"] == "fail" for c in ran), [c["status"] for c in ran]
    r, _ = run(exe, f"{plugins}/libmoe_example_plugin.so~bf16_accumulation", f"{work}/in_kernel")
    assert r.returncode == 2 and "needs the kernel's inside" in r.stderr, (r.returncode, r.stderr[-2000:])
    r, _ = run(exe, f"{plugins}/libmoe_example_plugin.so~no_such_bug", f"{work}/unknown_mutant")
    assert r.returncode == 2 and "unknown mutant 'no_such_bug'" in r.stderr, (r.returncode, r.stderr[-2000:])

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

    truncated, fifo, text, other_machine = broken_copies(plugins, work)
    refused = [
            ("wrong_abi", f"{plugins}/libmoe_test_plugin_wrong_abi.so", "plugin ABI version 999 but this harness speaks versions 1 to 2"),
            ("no_entry", f"{plugins}/libmoe_test_plugin_no_entry.so", "no symbol moe_plugin_entry"),
            ("bare_name", "libmoe_example_plugin.so", "not a bare library name"),
            ("missing", f"{work}/nope.so", "No such file or directory"),
            ("directory", work, "is a directory"),
            ("dev_zero", "/dev/zero", "is a character device"),
            ("fifo", fifo, "is a FIFO"),
            ("not_elf", text, "not an ELF file"),
            ("other_machine", other_machine, "built for ELF machine"),
            ("data_entry", f"{plugins}/libmoe_test_plugin_data_entry.so", "moe_plugin_entry is not a function"),
            ("id_not_utf8", f"{plugins}/libmoe_test_plugin_strings_1.so", "id 'bad-\\xff\\xfe-id' is not UTF-8"),
            ("version_overlong_utf8", f"{plugins}/libmoe_test_plugin_strings_2.so", "version '1\\xc0\\x80' is not UTF-8")]
    for name, plugin, want in refused + [(f"truncated_{n}", t, "truncated") for n, t in truncated]:
        r, report = run(exe, plugin, f"{work}/{name}")
        assert r is not None and r.returncode == 2 and want in r.stderr, (name, r and r.returncode, r and r.stderr)
        assert not os.path.exists(f"{work}/{name}"), name

    # Two kernels with one id in a run are refused at registration, before anything runs: the same library twice,
    # and a plugin that calls itself host-contract beside the host kernel.
    example = f"{plugins}/libmoe_example_plugin.so"
    for name, args, want in [
            ("same_plugin_twice", ["--plugin", example, "--plugin", example], "two kernels with the id 'example-c-plugin'"),
            ("plugin_named_host", ["--plugin", f"{plugins}/libmoe_test_plugin_strings_3.so", "--kernel", "host"],
             "two kernels with the id 'host-contract'")]:
        r = subprocess.run([exe, "run", "--suite", "smoke", *args, "--report-dir", f"{work}/{name}"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and want in r.stderr and "[1/" not in r.stderr, (name, r.returncode, r.stderr[-2000:])
        assert not os.path.exists(f"{work}/{name}"), name

    # A plugin's per-case text that is not UTF-8 (here a decline reason) reaches the report readably, \xNN for
    # each byte that is not UTF-8; the run is judged as usual (the host kernel passes the case it runs).
    r, report = run(exe, f"{plugins}/libmoe_test_plugin_strings_4.so", f"{work}/reason", "--kernel", "host",
                    "--filter", "*T1/decode/atomic")
    assert r.returncode == 0 and report, (r.returncode, r.stderr[-2000:])
    reasons = {c["reason"] for c in report["cases"] if c["kernel"] == "strings-plugin"}
    assert reasons == {"strings-plugin does not support this case: declined \\xff here"}, reasons
    print(f"plugins ok: {len(passed)} passed, {len(skipped)} declined; mutant failed {len(ran)}/{len(ran)}")


if __name__ == "__main__":
    main()
