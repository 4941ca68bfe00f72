#!/usr/bin/env python3
"""`moe-harness judge` on outputs of an external program (kernels/external/numpy_runner.py, NumPy only) computed from
`moe-harness export`: a correct runner passes; each injected bug fails (exit 1) on the check that should see it; an
output for another shape, another fixture or under another tensor name is bad input (exit 2) and writes nothing.
An output that is all NaN, all Inf or never written is a failed case (exit 1), never a harness error; a token with
non-finite elements has null cos and rel; an output without the fixture fingerprint is refused unless
--allow-missing-fingerprint, and the report says it was not checked; the probes that cannot run on a file's output
(rerun, linearity) are reported as not run, without mismatch metrics. Every report validates against the schema.

Usage: check_judge_external.py MOE_HARNESS RUNNER.py WORK_DIR SCHEMA
"""
import json
import os
import shutil
import subprocess
import sys

import jsonschema
import numpy as np

sys.path.insert(0, os.path.dirname(sys.argv[2]))
import numpy_runner  # noqa: E402  (the safetensors reader/writer of the example)

CASES = ["custom-h256i256e16k4-softmax_topk/tp1/bf16.a16/gelu_erf+bias/T3/decode/atomic",
         "custom-h256i256e16k1s1x128-sigmoid_top1/tp1/bf16.a16+sh.bf16.a16/silu+win/T6/decode/atomic",
         "custom-h256i256e16k4-softmax_topk/tp1/fp16.a16/silu/T5/decode/atomic/in-f16/mid-f16/out-f16",
         "custom-h256i256e16k4s1x128-softmax_topk/tp1/bf16.a16+sh.bf16.a16-sep/silu/T5/decode/per_k",
         "qwen3.5-35b-a3b/tp4/ep8r0/bf16.a16+sh.bf16.a16/silu/T3/decode/atomic"]


def run(*cmd):
    return subprocess.run(list(cmd), capture_output=True, text=True)


def main():
    exe, runner, work, schema_path = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    schema = json.load(open(schema_path))
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
        if report is not None:
            jsonschema.validate(report, schema)
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
        # A file's output cannot be run again: those probes did not run, and no mismatch count says otherwise.
        p = c["probes"]
        assert p["fixture_fingerprint"] == "ran", p
        for probe in ("rerun", "rerun_identical", "linearity_all_weights", "linearity_one_expert"):
            assert p[probe].startswith("not run: the kernel cannot run a second time"), (probe, p)
        for m in ("rerun_unwritten", "rerun_mismatches", "linearity_mismatches"):
            assert m not in c["metrics"], (m, c["metrics"])
        assert "rerun not run: the kernel cannot run a second time" in c["details"], c["details"]
        md = open(f"{rep}/summary.md").read()
        assert "Checks not run" in md and "`linearity_one_expert` not run: the kernel cannot run" in md, md

    # The rounding contract of an external output: the runner rounding like vLLM's pipeline (--round
    # gate_up=bf16,slot=bf16) passes when judge is told so (--contract), and fails the exact-tier case, whose slots are
    # not bf16 values, when it is not; a contract judge cannot parse is bad input (exit 2).
    suite = f"{work}/contract.yaml"
    open(suite, "w").write("suite: contract\ncases:\n  - {hidden: 136, inter: 128, experts: 8, topk: 2, tokens: 4, "
                           "tier: exact, routing: {kind: precomputed}}\n")
    (exact_case,) = run(exe, "list", "--suite", suite).stdout.split()
    r = run(exe, "export", exact_case, "--suite", suite, "--out", f"{work}/exact")
    assert r.returncode == 0, r.stderr
    vllm_out = f"{work}/exact/vllm.safetensors"
    r = run(sys.executable, runner, f"{work}/exact", vllm_out, "--round", "gate_up=bf16,slot=bf16")
    assert r.returncode == 0, r.stderr
    res, report, _ = judge(exact_case, vllm_out, "vllm", "--suite", suite, "--contract", "gate_up=bf16,slot=bf16")
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-2000:])
    (c,) = report["cases"]
    assert c["status"] == "pass" and c["rounding_contract"] == {
        "effective": "gate_up=bf16,slot=bf16", "source": "kernel", "declared": "gate_up=bf16,slot=bf16",
        "not_applied": ""}, c
    res, report, _ = judge(exact_case, vllm_out, "vllm-undeclared", "--suite", suite)
    assert res.returncode == 1, res.stdout[-2000:]
    (c,) = report["cases"]
    assert c["failed_check"] == "bitwise" and c["rounding_contract"]["effective"] == "default", c
    res, report, rep = judge(exact_case, vllm_out, "bad-contract", "--suite", suite, "--contract", "gate_up=bf17")
    assert res.returncode == 2 and "--contract" in res.stderr and "bf17" in res.stderr, res.stderr
    assert report is None and not os.path.exists(rep), rep
    res, report, rep = judge(exact_case, vllm_out, "bad-form", "--suite", suite, "--contract", "token_scale_form=rcp")
    assert res.returncode == 2 and "key '--contract'" in res.stderr and "divide, qmax_reciprocal" in res.stderr, \
        res.stderr
    assert report is None and not os.path.exists(rep), rep

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
        if bug == "drop_last_token":
            # The NaN token has no cos or rel (null), is the worst token, and min_cos / max_rel do not hide it.
            assert c["token_cos"][-1] is None and c["token_rel"][-1] is None, c["token_cos"]
            assert all(v is not None for v in c["token_cos"][:-1]), c["token_cos"]
            assert c["metrics"]["min_cos"] is None and c["metrics"]["max_rel"] is None, c["metrics"]
            worst = c["details"].split("worst tokens")[1].splitlines()[1].strip()
            assert worst.startswith(f"{len(c['token_cos']) - 1}: cos NaN, rel NaN"), c["details"]

    # Systematic errors through judge: a dead channel, a gain of 3 % and of 0.3 %, truncation instead of rounding at
    # the output. Each fails (exit 1); the statistic that sees it is in the report as failed, where it is; the
    # gain of 0.3 % and truncation pass every per-token check, so a systematic statistic is the failed check.
    # The clean output above passed with every statistic reported.
    for i in (0, 4):
        case_i, d_i = CASES[i], f"{work}/ex{i}"
        _, clean, _ = judge(case_i, f"{d_i}/out.safetensors", f"clean-sys{i}")
        assert set(clean["cases"][0]["systematic"]) == {"gain", "channel", "rounding_bias", "expert", "offset", "token_gain",
                                                          "expert_partial", "slot_direction", "channel_group"}, clean["cases"][0]
        assert not any(s["failed"] for s in clean["cases"][0]["systematic"].values()), clean["cases"][0]["systematic"]
        hidden = numpy_runner.read_safetensors(f"{d_i}/out.safetensors")[0]["out"][1].shape[1]
        for bug, stat, first in [("dead_channel", "channel", None), ("gain_3pct", "gain", None),
                                 ("gain_0.3pct", "gain", {"gain"}), ("truncate_output", "rounding_bias",
                                                                     {"gain", "rounding_bias"})]:
            out = f"{d_i}/out-{bug}.safetensors"
            assert run(sys.executable, runner, d_i, out, "--bug", bug).returncode == 0
            res, report, rep = judge(case_i, out, f"{bug}{i}")
            assert res.returncode == 1, (bug, res.returncode, res.stdout[-1500:])
            (c,) = report["cases"]
            s = c["systematic"][stat]
            assert c["status"] == "fail" and s["status"] == "ran" and s["failed"], (bug, c["failed_check"], s)
            assert abs(s["z"]) > s["z_threshold"] and abs(s["effect"]) > s["effect_floor"], (bug, s)
            if first is not None:
                assert c["failed_check"] in first, (bug, c["failed_check"], c["reason"])
            if bug == "dead_channel":
                assert s["at"] == f"channel {hidden // 2} (of {hidden})" and s["effect"] == 1.0, s
            if bug == "gain_3pct":
                assert abs(s["effect"] - 0.03) < 3e-3, s
            if bug == "truncate_output":
                assert -0.6 < s["effect"] < -0.4, s  # half an ulp toward zero
            assert f"{stat}: z " in c["details"] and "FAIL" in c["details"], c["details"]

    # Outputs with nothing usable in them: each is a failed case (exit 1) on the kernel, never a harness error
    # blaming the fixture; the reference norm is that of the exported reference, whatever the output holds.
    good_tensors, good_meta = numpy_runner.read_safetensors(f"{d}/out.safetensors")
    ref = numpy_runner.read_safetensors(f"{d}/reference.safetensors")[0]["out_contract"][1].astype(np.float64)
    shape = good_tensors["out"][1].shape
    for name, bits, check in [("all_nan", 0x7FC0, "non_finite"), ("all_inf", 0x7F80, "non_finite"),
                              ("all_minus_inf", 0xFF80, "non_finite"),
                              ("all_sentinel", 0x7FA5, "unwritten")]:  # bf16 sentinel: docs/cli.md "Judging"
        out = f"{work}/{name}.safetensors"
        numpy_runner.write_safetensors(out, {"out": ("BF16", np.full(shape, bits, dtype=np.uint16))}, good_meta)
        res, report, _ = judge(case, out, name)
        assert res.returncode == 1, (name, res.returncode, res.stderr[-1500:])
        (c,) = report["cases"]
        assert c["status"] == "fail" and c["failed_check"] == check, (name, c["failed_check"], c["reason"])
        m = c["metrics"]
        assert m[check] == ref.size, (name, m)
        assert abs(m["ref_norm"] - np.sqrt((ref ** 2).sum())) <= 1e-6 * m["ref_norm"], (name, m["ref_norm"])
        assert all(v is None for v in c["token_cos"] + c["token_rel"]), (name, c["token_cos"])
        assert m["min_cos"] is None and m["max_rel"] is None, (name, m)

    # No fixture fingerprint in the output: refused (exit 2, the flag named, nothing written) unless the flag says
    # so; then judged, and the report says the fingerprint was not checked.
    unsigned = f"{work}/unsigned.safetensors"
    numpy_runner.write_safetensors(unsigned, good_tensors, {"moe.case_id": case})
    res, report, rep = judge(case, unsigned, "unsigned")
    assert res.returncode == 2 and "records no fixture fingerprint" in res.stderr, (res.returncode, res.stderr)
    assert "--allow-missing-fingerprint" in res.stderr and not os.path.exists(rep), res.stderr
    res, report, rep = judge(case, unsigned, "unsigned_allowed", "--allow-missing-fingerprint")
    assert res.returncode == 0, (res.returncode, res.stdout[-1500:])
    (c,) = report["cases"]
    assert c["status"] == "pass", c
    assert c["probes"]["fixture_fingerprint"].startswith("not run: the output records no fixture fingerprint"), c
    assert "`fixture_fingerprint` not run" in open(f"{rep}/summary.md").read()

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
    # Likewise bf16 routed experts beside an fp8 shared expert: the runner reads the stored dtypes of every weight
    # the fixture holds (the shared ones too), not the routed scheme's name.
    suite = f"{work}/shared-fp8.yaml"
    with open(suite, "w") as f:
        f.write("suite: shared-fp8\ncases:\n  - {hidden: 256, inter: 256, experts: 16, topk: 4, n_shared: 1, "
                "shared_inter: 128, tokens: 3, shared_quant: {weight: fp8_channel, act: fp8_token}}\n")
    (shared_case,) = run(exe, "list", "--suite", suite).stdout.split()
    d = f"{work}/shared-fp8"
    assert run(exe, "export", shared_case, "--suite", suite, "--out", d).returncode == 0
    r = run(sys.executable, runner, d, f"{d}/out.safetensors")
    assert r.returncode == 2 and "shared weights stored as F8_E4M3/F8_E4M3 with scales" in r.stderr, (r.returncode, r.stderr)
    assert not os.path.exists(f"{d}/out.safetensors")
    print("judge external ok")


if __name__ == "__main__":
    main()
