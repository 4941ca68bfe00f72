#!/usr/bin/env python3
"""`moe-harness compare` and `moe-harness gate` on a real smoke report and copies edited the ways regressions show up.

Usage: check_compare_gate.py MOE_HARNESS WORK_DIR
"""
import copy
import json
import os
import shutil
import subprocess
import sys


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def main():
    exe, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    p = run(exe, "run", "--suite", "smoke", "--report-dir", f"{work}/base")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    base_path = f"{work}/base/report.json"
    base = json.load(open(base_path))

    def write(name, report):
        path = f"{work}/{name}.json"
        json.dump(report, open(path, "w"))
        return path

    # Identical runs: no drift.
    same = run(exe, "compare", base_path, base_path)
    assert same.returncode == 0 and "No drift" in same.stdout, same.stdout

    # Each regression kind, one at a time, must be flagged and exit 1.
    edits = {
        "missing": lambda r: r["cases"].pop(0),
        "skipped": lambda r: r["cases"][1].update(status="skip", reason="no GPU: test"),
        "status": lambda r: r["cases"][2].update(status="fail", reason="min_cos: test"),
        "variant": lambda r: r["cases"][3].update(variant="other/path"),
        "min_cos": lambda r: r["cases"][4]["metrics"].update(min_cos=r["cases"][4]["metrics"]["min_cos"] - 0.01),
        "max_rel": lambda r: r["cases"][5]["metrics"].update(max_rel=0.5),
        "token_cos": lambda r: r["cases"][6]["token_cos"].__setitem__(0, r["cases"][6]["token_cos"][0] - 0.01),
    }
    for kind, edit in edits.items():
        new = copy.deepcopy(base)
        edit(new)
        path = write(kind, new)
        c = run(exe, "compare", base_path, path, "--json", f"{work}/{kind}.drift.json")
        findings = json.load(open(f"{work}/{kind}.drift.json"))["findings"]
        assert c.returncode == 1, (kind, c.returncode, c.stdout)
        assert any(f["kind"] == kind for f in findings), (kind, findings)
        print(f"compare flags {kind}: ok")

    # Regressions that used to pass silently: other fixtures (another seed or generator), an absent metric, another
    # token count.
    edits = {
        "fixture": lambda r: r["cases"][7].update(fixture_fingerprint="0123456789abcdef"),
        "non_finite": lambda r: r["cases"][8]["metrics"].pop("max_rel"),
        "token_count": lambda r: (r["cases"][9]["token_cos"].append(1.0), r["cases"][9]["token_rel"].append(0.0)),
    }
    for kind, edit in edits.items():
        new = copy.deepcopy(base)
        edit(new)
        c = run(exe, "compare", base_path, write(kind, new), "--json", f"{work}/{kind}.drift.json")
        findings = json.load(open(f"{work}/{kind}.drift.json"))["findings"]
        assert c.returncode == 1, (kind, c.returncode, c.stdout)
        assert any(f["kind"] == kind and f["fails"] for f in findings), (kind, findings)
        print(f"compare flags {kind}: ok")

    # Ranked: a new failure comes first, whatever its place in the report; a newly added case last.
    new = copy.deepcopy(base)
    new["cases"][0]["variant"] = "other/path"
    new["cases"][5].update(status="fail", reason="min_cos: test", failed_check="min_cos")
    new["cases"].append(dict(copy.deepcopy(base["cases"][1]), id=base["cases"][1]["id"] + "/added"))
    c = run(exe, "compare", base_path, write("ranked", new), "--json", f"{work}/ranked.drift.json")
    findings = json.load(open(f"{work}/ranked.drift.json"))["findings"]
    assert c.returncode == 1 and [f["kind"] for f in findings] == ["status", "variant", "new"], findings
    assert findings[0]["id"] == base["cases"][5]["id"] and "-> fail" in findings[0]["detail"], findings[0]
    assert c.stdout.index("| status |") < c.stdout.index("| variant |"), c.stdout
    print("compare ranks new failures first: ok")

    # A case the base skipped and the new run lacks lost nothing: not a regression (reported, exit 0).
    skipped_base = copy.deepcopy(base)
    skipped_base["cases"][0].update(status="skip", reason="no GPU here: test", metrics={}, token_cos=[], token_rel=[],
                                    variant="", fixture_fingerprint="0" * 16)
    lacking = copy.deepcopy(base)
    lacking["cases"].pop(0)
    c = run(exe, "compare", write("skipped_base", skipped_base), write("lacking", lacking))
    assert c.returncode == 0 and base["cases"][0]["id"] in c.stdout, (c.returncode, c.stdout)
    print("compare: a vanished skip is no regression: ok")

    # --kernel: short names work; only that kernel's cases are compared; a kernel in neither report is bad input;
    # a base with nothing to compare is never green (exit 4).
    two_base, two_new = copy.deepcopy(base), copy.deepcopy(base)
    for r in (two_base, two_new):
        r["cases"] += [dict(copy.deepcopy(c), kernel="gpu-fused-moe") for c in base["cases"]]
    two_new["cases"][len(base["cases"])].update(status="fail", reason="min_cos: test", failed_check="min_cos")
    tb, tn = write("two_base", two_base), write("two_new", two_new)
    assert run(exe, "compare", tb, tn).returncode == 1
    host = run(exe, "compare", tb, tn, "--kernel", "host")
    assert host.returncode == 0 and "No drift" in host.stdout, (host.returncode, host.stdout, host.stderr)
    gpu = run(exe, "compare", tb, tn, "--kernel", "gpu")
    assert gpu.returncode == 1 and "gpu-fused-moe" in gpu.stdout, (gpu.returncode, gpu.stdout, gpu.stderr)
    unknown = run(exe, "compare", base_path, base_path, "--kernel", "gpu")
    assert unknown.returncode == 2 and "gpu-fused-moe" in unknown.stderr and "host-contract" in unknown.stderr, \
        (unknown.returncode, unknown.stderr)
    empty = dict(copy.deepcopy(base), cases=[], summary={"total": 0, "pass": 0, "fail": 0, "skip": 0, "error": 0})
    nothing = run(exe, "compare", write("empty", empty), base_path)
    assert nothing.returncode == 4 and "nothing" in nothing.stderr, (nothing.returncode, nothing.stdout, nothing.stderr)
    print("compare --kernel: ok")

    # A newly added case alone is information, not drift.
    new = copy.deepcopy(base)
    extra = copy.deepcopy(new["cases"][0])
    extra["id"] = extra["id"] + "/extra"
    new["cases"].append(extra)
    assert run(exe, "compare", base_path, write("new", new)).returncode == 0

    # Bad input: not a report.
    bad = write("bad", {"hello": 1})
    b = run(exe, "compare", base_path, bad)
    assert b.returncode == 2 and "schema_version" in b.stderr, (b.returncode, b.stderr)

    # Gate: the smoke report passes a smoke policy; a missing, a skipped or a failed case fails it, saying what to do.
    g = run(exe, "gate", "--policy", "smoke", base_path)
    assert g.returncode == 0 and "gate: PASS" in g.stdout, g.stdout
    for kind in ("missing", "skipped", "status"):
        g = run(exe, "gate", "--policy", "smoke", f"{work}/{kind}.json")
        assert g.returncode == 1 and "GATE FAIL" in g.stdout and "to do:" in g.stdout, (kind, g.stdout)
        print(f"gate fails on {kind}: ok")

    # The short kernel names of `run` (host, gpu) name the same kernels in the gate.
    g = run(exe, "gate", "--policy", "smoke", base_path, "--kernel", "host")
    assert g.returncode == 0 and "gate: PASS" in g.stdout, g.stdout

    # Reports the gate must never pass: one that holds no case (with or without the kernel named), one with a
    # (case, kernel) recorded twice, and a device kernel's report that names no device (its targeted cases could not
    # be chosen). Each fails (exit 1) with a line saying why.
    empty = copy.deepcopy(base)
    empty["cases"] = []
    dup = copy.deepcopy(base)
    dup["cases"].append(copy.deepcopy(dup["cases"][0]))
    dup_fail = copy.deepcopy(base)  # the second record of a passed case says fail: which verdict counts?
    dup_fail["cases"].append(dict(copy.deepcopy(dup_fail["cases"][0]), status="fail", reason="min_cos: test"))
    gpu = copy.deepcopy(base)  # the same results as a device kernel's, from a run that recorded no device
    gpu["provenance"]["kernels"] = [{"id": "gpu-fused-moe", "version": "1"}]
    for c in gpu["cases"]:
        c["kernel"] = "gpu-fused-moe"
    for name, report, args, needle in [
            ("empty", empty, [], "holds no case"),
            ("empty_with_kernel", empty, ["--kernel", "host"], "holds no case"),
            ("duplicate", dup, [], "more than once"),
            ("duplicate_fail", dup_fail, [], "more than once"),
            ("no_device_identity", gpu, [], "names no device"),
            ("no_device_identity_short_name", gpu, ["--kernel", "gpu"], "names no device")]:
        g = run(exe, "gate", "--policy", "smoke", write(name, report), *args)
        assert g.returncode == 1 and "gate: FAIL" in g.stdout and needle in g.stdout, (name, g.returncode, g.stdout)
        print(f"gate fails on {name}: ok")
    # Control: the same device-kernel report, with the device named, passes (smoke cases target no arch).
    named = copy.deepcopy(gpu)
    named["provenance"]["device"].update(name="NVIDIA H200", arch="sm_90")
    g = run(exe, "gate", "--policy", "smoke", write("device_named", named), "--kernel", "gpu")
    assert g.returncode == 0 and "gate: PASS" in g.stdout, g.stdout

    # An unknown kernel name is a usage error (exit 2), not "every case missing".
    g = run(exe, "gate", "--policy", "smoke", base_path, "--kernel", "host-contrct")
    assert g.returncode == 2 and "unknown kernel 'host-contrct'" in g.stderr, (g.returncode, g.stderr)
    print("gate refuses an unknown kernel name: ok")


if __name__ == "__main__":
    main()
