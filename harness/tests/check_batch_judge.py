#!/usr/bin/env python3
"""The file-based path in batch: `moe-harness export --suite S --filter G --out DIR` writes one directory per case
(named by docs/export.md's rule, re-implemented here) holding what `export CASE` writes, byte for byte, and
DIR/index.json; an external program (kernels/external/numpy_runner.py) writes each case's out.safetensors; `judge
--dir DIR` judges them all in one process with `run`'s reports. Checked: a correct runner passes every case on the
exported references; --recompute gives the same metrics with every reference recomputed; a planted wrong output
fails its case on the check that sees it and only that case; a truncated output is an error record of its case
naming the file while the others are still judged; a reference.safetensors changed after export is recomputed,
never trusted (the output planted to equal the tampered reference fails); another --contract than the export's
recomputes under it; a tolerance edited since export judges with the new threshold on the exported reference, a
recorded key of another canonical case is recomputed, a case no longer in the suite is an error record; a case for
other kernels is skipped (all skipped: exit 4); an empty or missing DIR exits 2 and writes no report; a filter that
selects nothing exits 4 and writes nothing; a case the host cannot build (an address-space limit) is listed in the
index with the reason, the others exported (exit 3), and judge --dir makes it an error record (exit 3) while judging
the rest. Every report validates against the schema.

Usage: check_batch_judge.py MOE_HARNESS RUNNER.py WORK_DIR SCHEMA
"""
import filecmp
import json
import os
import resource
import shutil
import subprocess
import sys

import jsonschema
import numpy as np

sys.path.insert(0, os.path.dirname(sys.argv[2]))
import numpy_runner  # noqa: E402  (the safetensors reader/writer of the example)

FILTERS = ["--filter", "custom-*bf16.a16/silu/T3/decode/*", "--filter", "*gelu_erf+bias/T3*", "--filter", "*sigmoid_top1*"]


def dir_name(case_id):
    """docs/export.md: letters, digits and `. + - _ , =` kept, '/' as '~', any other byte as %xx."""
    out = ""
    for b in case_id.encode():
        ch = chr(b)
        if ch.isascii() and (ch.isalnum() or ch in ".+-_,="):
            out += ch
        elif ch == "/":
            out += "~"
        else:
            out += "%%%02x" % b
    return out


def run(*cmd):
    return subprocess.run(list(cmd), capture_output=True, text=True)


def main():
    exe, runner, work, schema_path = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    schema = json.load(open(schema_path))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ids = run(exe, "list", "--suite", "smoke", *FILTERS).stdout.split()
    assert len(ids) == 5, ids
    ex = f"{work}/ex"
    r = run(exe, "export", "--suite", "smoke", *FILTERS, "--out", ex)
    assert r.returncode == 0, r.stderr
    index = json.load(open(f"{ex}/index.json"))
    assert [c["id"] for c in index["cases"]] == ids, index["cases"]
    for c in index["cases"]:
        assert c["exported"] is True and c["dir"] == dir_name(c["id"]), c
        assert sorted(os.listdir(f"{ex}/{c['dir']}")) == ["case.json", "fixture.safetensors", "reference.safetensors"]
    assert sorted(os.listdir(ex)) == sorted([c["dir"] for c in index["cases"]] + ["index.json"]), os.listdir(ex)
    # Each directory is what `export CASE` writes, byte for byte.
    single = f"{work}/single"
    assert run(exe, "export", ids[0], "--out", single).returncode == 0
    for f in ("case.json", "fixture.safetensors", "reference.safetensors"):
        assert filecmp.cmp(f"{single}/{f}", f"{ex}/{dir_name(ids[0])}/{f}", shallow=False), f

    def judge(name, *extra):
        rep = f"{work}/rep-{name}"
        res = run(exe, "judge", "--dir", ex, "--report-dir", rep, *extra)
        report = json.load(open(f"{rep}/report.json")) if os.path.exists(f"{rep}/report.json") else None
        if report is not None:
            jsonschema.validate(report, schema)
            for f in ("junit.xml", "summary.md", "report.html"):
                assert os.path.exists(f"{rep}/{f}"), f
        return res, report, {c["id"]: c for c in report["cases"]} if report else None

    for i in ids:
        d = f"{ex}/{dir_name(i)}"
        res = run(sys.executable, runner, d, f"{d}/out.safetensors")
        assert res.returncode == 0, res.stderr
    res, report, by_id = judge("clean")
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-2000:])
    assert list(by_id) == ids and all(c["status"] == "pass" and c["kernel"] == "external" for c in by_id.values())
    for c in by_id.values():
        assert c["probes"]["exported_reference"] == "ran" and c["probes"]["fixture_fingerprint"] == "ran", c["probes"]
        assert c["fixture_fingerprint"] == index["cases"][ids.index(c["id"])]["fixture_fingerprint"]
    assert "5 from the export, 0 recomputed" in res.stdout, res.stdout
    # --recompute: every reference computed again from a regenerated fixture, the same verdicts and metrics.
    res, _, again = judge("recompute", "--recompute")
    assert res.returncode == 0 and "0 from the export, 5 recomputed" in res.stdout, res.stdout
    for i in ids:
        assert again[i]["probes"]["exported_reference"] == "not run: recomputed (--recompute)", again[i]["probes"]
        assert again[i]["metrics"] == by_id[i]["metrics"] and again[i]["token_cos"] == by_id[i]["token_cos"], i

    # Another rounding contract than the export's: not the exported reference's, so recomputed under it.
    res, _, other = judge("contract", "--contract", "gate_up=bf16,slot=bf16")
    for i in ids:
        assert other[i]["probes"]["exported_reference"] == ("not run: recomputed (exported under rounding contract "
                                                            "default, judged under gate_up=bf16,slot=bf16)"), other[i]
        assert other[i]["rounding_contract"]["effective"] == "gate_up=bf16,slot=bf16", other[i]["rounding_contract"]
    # A CASE beside --dir is a usage error.
    res = run(exe, "judge", ids[0], "--dir", ex, "--report-dir", f"{work}/rep-both")
    assert res.returncode == 2 and "--dir" in res.stderr and not os.path.exists(f"{work}/rep-both"), res.stderr
    res = run(exe, "judge", "--dir", ex, "--output", f"{work}/out.safetensors", "--report-dir", f"{work}/rep-abs")
    assert res.returncode == 2 and "--output" in res.stderr and not os.path.exists(f"{work}/rep-abs"), res.stderr

    # A planted wrong output fails its case (only), on a check that sees it.
    bad_dir = f"{ex}/{dir_name(ids[1])}"
    assert run(sys.executable, runner, bad_dir, f"{bad_dir}/out.safetensors", "--bug", "swap_gate_up").returncode == 0
    # A truncated output is an error record of its case, naming the file; the others are judged.
    cut = f"{ex}/{dir_name(ids[2])}/out.safetensors"
    data = open(cut, "rb").read()
    open(cut, "wb").write(data[: len(data) // 2])
    res, report, by_id = judge("planted")
    assert res.returncode == 3, (res.returncode, res.stdout[-2000:])  # an error outranks a failure
    assert by_id[ids[1]]["status"] == "fail", by_id[ids[1]]
    assert by_id[ids[1]]["failed_check"] in {"min_cos", "max_rel", "mismatch_fraction"}, by_id[ids[1]]["failed_check"]
    assert by_id[ids[2]]["status"] == "error" and cut in by_id[ids[2]]["reason"], by_id[ids[2]]
    for i in ids[:1] + ids[3:]:
        assert by_id[i]["status"] == "pass", by_id[i]
    assert len(report["cases"]) == len(ids)
    assert run(sys.executable, runner, f"{ex}/{dir_name(ids[2])}", cut).returncode == 0  # whole again

    # A reference changed after export is not trusted: here it is made equal to a wrong output (the router weights
    # left out), so trusting it would pass that output; recomputed, the output fails and the record says why.
    d = f"{ex}/{dir_name(ids[0])}"
    wrong = f"{d}/out.safetensors"
    assert run(sys.executable, runner, d, wrong, "--bug", "no_router_weight").returncode == 0
    out_bits = numpy_runner.read_safetensors(wrong)[0]["out"][1]
    ref_tensors, ref_meta = numpy_runner.read_safetensors(f"{d}/reference.safetensors")
    wrong_f32 = numpy_runner.bf16_to_f32(out_bits).astype(np.float32)
    ref_tensors["out_contract"] = ("F32", wrong_f32)
    ref_tensors["out_ideal"] = ("F32", wrong_f32)
    numpy_runner.write_safetensors(f"{d}/reference.safetensors", ref_tensors, ref_meta)
    res, report, by_id = judge("tampered")
    assert res.returncode == 1, (res.returncode, res.stdout[-2000:])
    c = by_id[ids[0]]
    assert c["status"] == "fail" and c["failed_check"] in {"min_cos", "max_rel", "mismatch_fraction"}, c
    assert c["probes"]["exported_reference"].startswith("not run: recomputed (") and "differ from what export recorded" \
        in c["probes"]["exported_reference"], c["probes"]
    assert "4 from the export, 1 recomputed" in res.stdout, res.stdout
    assert by_id[ids[1]]["status"] == "fail" and all(by_id[i]["status"] == "pass" for i in ids[2:])

    # An empty or missing directory is bad input (exit 2), never green, and writes no report.
    os.makedirs(f"{work}/empty")
    for name, path in [("empty", f"{work}/empty"), ("missing", f"{work}/nope")]:
        rep = f"{work}/rep-{name}"
        res = run(exe, "judge", "--dir", path, "--report-dir", rep)
        assert res.returncode == 2 and path in res.stderr, (name, res.returncode, res.stderr)
        assert not os.path.exists(rep), name
    # A CASE beside --filter is a usage error (the filter takes one value, so CASE is not read as a second one).
    res = run(exe, "export", "--out", f"{work}/both", "--filter", "*", ids[0])
    assert res.returncode == 2 and "--filter" in res.stderr and not os.path.exists(f"{work}/both"), res
    # A filter that selects nothing: nothing exported, exit 4, no directory.
    res = run(exe, "export", "--suite", "smoke", "--filter", "no/such/*", "--out", f"{work}/none")
    assert res.returncode == 4 and not os.path.exists(f"{work}/none"), (res.returncode, res.stderr)
    # The suite edited after export: a tightened tolerance leaves the reference as it was (the canonical case, which
    # the key hashes, holds no thresholds), so it is used, with the edited threshold; another seed is another case
    # id, no longer in the suite: an error record. A key whose case hash differs (what an edit of the problem
    # without a new id would give) is recomputed: the fixture regenerates to the exported one and the output passes.
    shape = "hidden: 256, inter: 256, experts: 16, topk: 4, tokens: 3"
    for name, extra in [("e1", "seed: 5"), ("e2", "seed: 5, tolerance: {min_cos: 0.99991}"), ("e3", "seed: 6")]:
        open(f"{work}/{name}.yaml", "w").write(f"suite: e\ncases:\n  - {{{shape}, {extra}}}\n")
    (eid,) = run(exe, "list", "--suite", f"{work}/e1.yaml").stdout.split()
    edir = f"{work}/edited"
    assert run(exe, "export", "--suite", f"{work}/e1.yaml", "--out", edir).returncode == 0
    assert run(sys.executable, runner, f"{edir}/{dir_name(eid)}", f"{edir}/{dir_name(eid)}/out.safetensors").returncode == 0
    for label, suite_name, code, status, probe in [
            ("e1", "e1", 0, "pass", "ran"),
            ("e2", "e2", 0, "pass", "ran"),
            ("e3", "e3", 3, "error", None),
            ("e1-key", "e1", 0, "pass", "not run: recomputed (the case's definition in the suite changed since export)")]:
        if label == "e1-key":
            idx = json.load(open(f"{edir}/index.json"))
            key = idx["cases"][0]["reference_key"]
            at = key.index("|case=") + len("|case=")
            idx["cases"][0]["reference_key"] = key[:at] + "0123456789abcdef" + key[at + 16:]
            json.dump(idx, open(f"{edir}/index.json", "w"))
        rep = f"{work}/rep-{label}"
        res = run(exe, "judge", "--dir", edir, "--suite", f"{work}/{suite_name}.yaml", "--report-dir", rep)
        assert res.returncode == code, (label, res.returncode, res.stdout[-1500:])
        (c,) = json.load(open(f"{rep}/report.json"))["cases"]
        assert c["status"] == status, (label, c)
        if label == "e2":
            assert c["metrics"]["threshold_min_cos"] == 0.99991, c["metrics"]
        if probe:
            assert c["probes"]["exported_reference"] == probe, (label, c["probes"])
        else:
            assert "no case with id " + eid in c["reason"], c["reason"]

    # A case for other kernels only is gated as `run` gates it: a skip with the reason, no reference note; a
    # directory of nothing but skips judged nothing (exit 4).
    open(f"{work}/only.yaml", "w").write(f"suite: only\ncases:\n  - {{{shape}, kernels: [host-contract]}}\n")
    (oid,) = run(exe, "list", "--suite", f"{work}/only.yaml").stdout.split()
    odir = f"{work}/only"
    assert run(exe, "export", "--suite", f"{work}/only.yaml", "--out", odir).returncode == 0
    assert run(sys.executable, runner, f"{odir}/{dir_name(oid)}", f"{odir}/{dir_name(oid)}/out.safetensors").returncode == 0
    res = run(exe, "judge", "--dir", odir, "--report-dir", f"{work}/rep-only")
    assert res.returncode == 4 and "nothing checked" in res.stderr, (res.returncode, res.stderr)
    (c,) = json.load(open(f"{work}/rep-only/report.json"))["cases"]
    assert c["status"] == "skip" and c["reason"] == "the case lists kernels [host-contract], not external", c
    assert "exported_reference" not in c["probes"], c["probes"]

    # A case the host cannot build (here: its 4 GiB w13 under a 3 GiB address-space limit) is listed in the index
    # with the reason and no directory, the others are exported (exit 3); judge --dir makes it an error record of
    # its own (exit 3) and judges the rest.
    suite = f"{work}/gate.yaml"
    open(suite, "w").write("suite: gate\ncases:\n  - {hidden: 256, inter: 256, experts: 16, topk: 4, tokens: 3}\n"
                           "  - {hidden: 4096, inter: 4096, experts: 64, topk: 4, tokens: 3}\n")
    small, big = run(exe, "list", "--suite", suite).stdout.split()
    gate = f"{work}/gate"
    limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # noqa: E731
    res = subprocess.run([exe, "export", "--suite", suite, "--out", gate], capture_output=True, text=True,
                         preexec_fn=limit)
    assert res.returncode == 3 and "not exported: " + big in res.stderr, (res.returncode, res.stderr)
    entries = json.load(open(f"{gate}/index.json"))["cases"]
    assert [e["id"] for e in entries] == [small, big] and entries[0]["exported"] and not entries[1]["exported"]
    assert "out of host memory" in entries[1]["reason"] and "dir" not in entries[1], entries[1]
    assert sorted(os.listdir(gate)) == sorted([dir_name(small), "index.json"]), os.listdir(gate)
    assert run(sys.executable, runner, f"{gate}/{dir_name(small)}", f"{gate}/{dir_name(small)}/out.safetensors").returncode == 0
    res = run(exe, "judge", "--dir", gate, "--report-dir", f"{work}/rep-gate")
    assert res.returncode == 3, (res.returncode, res.stdout[-1500:])
    cases = {c["id"]: c for c in json.load(open(f"{work}/rep-gate/report.json"))["cases"]}
    assert cases[small]["status"] == "pass", cases[small]
    assert cases[big]["status"] == "error" and cases[big]["reason"].startswith("not exported: "), cases[big]
    print("batch judge ok:", len(ids), "cases")


if __name__ == "__main__":
    main()
