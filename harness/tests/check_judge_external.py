#!/usr/bin/env python3
"""`moe-harness judge` on outputs of an external program (kernels/external/numpy_runner.py, NumPy only) computed from
`moe-harness export`: a correct runner passes; each injected bug fails (exit 1) on the check that should see it; an
output for another shape, another fixture or under another tensor name is bad input (exit 2) and writes nothing.

Usage: check_judge_external.py MOE_HARNESS RUNNER.py WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(sys.argv[2]))
import numpy_runner  # noqa: E402  (the safetensors reader/writer of the example)

CASES = ["custom-h256i256e16k4-softmax_topk/tp1/bf16.a16/gelu_erf+bias/T3/decode/atomic",
         "custom-h256i256e16k1s1x128-sigmoid_top1/tp1/bf16.a16+sh.bf16.a16/silu+win/T6/decode/atomic",
         "custom-h256i256e16k4-softmax_topk/tp1/fp16.a16/silu/T5/decode/atomic/in-f16/mid-f16/out-f16",
         "custom-h256i256e16k4s1x128-softmax_topk/tp1/bf16.a16+sh.bf16.a16-sep/silu/T5/decode/per_k"]


def run(*cmd):
    return subprocess.run(list(cmd), capture_output=True, text=True)


def main():
    exe, runner, work = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    def export(case, name):
        d = f"{work}/{name}"
        r = run(exe, "export", case, "--out", d)
        assert r.returncode == 0, r.stderr
        return d

    def judge(case, out, name, *extra):
        rep = f"{work}/rep-{name}"
        r = run(exe, "judge", case, "--output", out, "--report-dir", rep, *extra)
        report = json.load(open(f"{rep}/report.json")) if os.path.exists(f"{rep}/report.json") else None
        return r, report, rep

    for i, case in enumerate(CASES):
        d = export(case, f"ex{i}")
        r = run(sys.executable, runner, d, f"{d}/out.safetensors")
        assert r.returncode == 0, r.stderr
        res, report, rep = judge(case, f"{d}/out.safetensors", f"ok{i}")
        assert res.returncode == 0, (case, res.stdout[-2000:], res.stderr[-2000:])
        (c,) = report["cases"]
        assert c["id"] == case and c["kernel"] == "external" and c["status"] == "pass", c
        assert os.path.exists(f"{rep}/junit.xml") and os.path.exists(f"{rep}/summary.md")

    # Bugs an external kernel could have: each must fail the verdict (exit 1), never pass.
    case, d = CASES[0], f"{work}/ex0"
    for bug, checks in [("swap_gate_up", {"min_cos", "max_rel", "mismatch_fraction"}),
                        ("no_router_weight", {"min_cos", "max_rel", "mismatch_fraction"}),
                        ("drop_last_token", {"non_finite"})]:
        out = f"{d}/out-{bug}.safetensors"
        assert run(sys.executable, runner, d, out, "--bug", bug).returncode == 0
        res, report, _ = judge(case, out, bug)
        assert res.returncode == 1, (bug, res.returncode, res.stdout[-1500:])
        (c,) = report["cases"]
        assert c["status"] == "fail" and c["failed_check"] in checks, (bug, c["failed_check"], c["reason"])

    # Bad input: exit 2, a message naming the file and the problem, and no report directory.
    good = f"{d}/out.safetensors"
    tensors, meta = numpy_runner.read_safetensors(good)
    renamed = f"{work}/renamed.safetensors"
    numpy_runner.write_safetensors(renamed, {"y": tensors["out"]}, meta)
    other_fixture = f"{work}/other-fixture.safetensors"
    numpy_runner.write_safetensors(other_fixture, tensors, dict(meta, **{"moe.fixture_fingerprint": "0123456789abcdef"}))
    as_f32 = f"{work}/f32.safetensors"
    numpy_runner.write_safetensors(as_f32, {"out": ("F32", numpy_runner.bf16_to_f32(tensors["out"][1]))}, meta)
    for name, out, case_id, want in [
            ("renamed", renamed, case, "no tensor 'out'"),
            ("other_fixture", other_fixture, case, "computed from fixture 0123456789abcdef"),
            ("wrong_dtype", as_f32, case, "dtype f32 but the case's output dtype is bf16"),
            ("wrong_shape", good, CASES[1], "shape [3, 256] but the case needs [tokens, hidden] = [6, 256]"),
            ("missing_file", f"{work}/nope.safetensors", case, "nope.safetensors"),
            ("unknown_case", good, "no/such/case", "no case with id")]:
        res, report, rep = judge(case_id, out, name)
        assert res.returncode == 2, (name, res.returncode, res.stderr)
        assert want in res.stderr, (name, res.stderr)
        assert not os.path.exists(rep), (name, "wrote a report on bad input")

    # A scheme the example does not handle: the runner itself says so (exit 2) instead of writing a wrong output.
    ids = run(exe, "list", "--suite", "smoke", "--filter", "*mxfp8*").stdout.split()
    d = export(ids[0], "mx")
    r = run(sys.executable, runner, d, f"{d}/out.safetensors")
    assert r.returncode == 2 and "not handled" in r.stderr and not os.path.exists(f"{d}/out.safetensors"), r
    print("judge external ok")


if __name__ == "__main__":
    main()
