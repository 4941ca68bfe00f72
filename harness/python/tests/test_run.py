"""case.run(kernel) and Session: the Python path gives the record `moe-harness run` gives for the same kernel, its
probes catch what they catch for native kernels, Python failures become error records, reports are `run`'s."""
import json
import subprocess
import sys
from pathlib import Path
import xml.etree.ElementTree as ET

import jsonschema
import numpy as np
import pytest

import moe_harness

SMOKE = ["*/T3/decode/atomic", "*fp8*", "*mxfp4.mx8*", "*ep2r1*", "*-sep/*"]
BF16 = "custom-h256i256e16k4-softmax_topk/tp1/bf16.a16/silu/T3/decode/atomic"


def one(case_id):
    (case,) = moe_harness.suite("smoke", filter=case_id)
    return case


def test_python_path_gives_runs_records(cli, tmp_path):
    subprocess.run([cli, "run", "--suite", "smoke", "--kernel", "host", "--no-isolation", "--report-dir", str(tmp_path)]
                   + [a for f in SMOKE for a in ("--filter", f)], check=True, capture_output=True)
    native = {c["id"]: c for c in json.loads((tmp_path / "report.json").read_text())["cases"]}
    host = moe_harness.native_kernel("host")
    cases = list(moe_harness.suite("smoke", filter=SMOKE))
    assert len(cases) == len(native) >= 8
    calls = 0
    for case in cases:
        v, want = case.run(host), native[case.id]
        assert v.kernel == want["kernel"] == "host-contract"
        assert (v.status, v.failed_check, v.variant) == (want["status"], want["failed_check"], want["variant"])
        assert v.fixture_fingerprint == int(want["fixture_fingerprint"], 16)
        assert v.metrics["min_cos"] == want["metrics"]["min_cos"] and v.metrics["max_rel"] == want["metrics"]["max_rel"]
        assert list(v.token_cos) == want["token_cos"]
        # The token probes hand run() another checkpoint, which a Python kernel gets as a fixture of its own; its rows
        # are compared with the row bound (a BLAS's results for a row may depend on the batch's layout): the padding,
        # the poisoned rows and the rotation run, the relabeling does not (a Python kernel may keep the weights it
        # converted in prepare(); this one does not declare rereads_expert_weights). Every other probe is run's.
        token = ("token_isolation", "red_zones", "token_permutation", "expert_relabeling")
        assert {k: s for k, s in v.probes if k not in token} == {k: s for k, s in want["probes"].items() if k not in token}
        if v.passed:
            got = dict(v.probes)
            assert got["token_isolation"] == got["red_zones"] == "ran", v.probes
            assert got["token_permutation"] == ("ran" if case.spec["shape"]["tokens"] > 1 else
                                                "not run: one token: nothing to permute"), v.probes
            assert got["expert_relabeling"].startswith("not run: the kernel may keep expert weights it converted"), v.probes
            assert "does not declare rereads_expert_weights" in got["expert_relabeling"], v.probes
        # The verdict run, then one more for each probe that ran a kernel (rerun_identical compares the rerun; the
        # token probes share one run, counted with red_zones, which runs whenever any of them does).
        shared = ("rerun_identical", "token_isolation", "token_permutation", "expert_relabeling")
        calls += 1 + sum(st == "ran" for name, st in v.probes if name not in shared)
    assert host.calls == calls


def test_kernel_exception_is_an_error_record_with_the_traceback():
    def kernel(fx, out):
        return 1 / 0

    v = one(BF16).run(kernel)
    assert v.status == "error" and v.failed_check == "harness_error"
    assert "ZeroDivisionError" in v.reason and "test_run.py" in v.reason and "return 1 / 0" in v.reason


def test_keyboard_interrupt_in_the_kernel_is_raised_again():
    def kernel(fx, out):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        one(BF16).run(kernel)


def test_views_kept_after_the_call_stay_valid():
    kept = []
    host = moe_harness.native_kernel("host")

    def kernel(fx, out):
        kept.append((np.asarray(fx["w13"]), np.asarray(fx["topk_weights"]), np.asarray(out)))
        return host(fx, out)

    v = one(BF16).run(kernel)
    assert v.passed and len(kept) == 5  # the verdict run, the rerun, two linearity runs, the token probes' run
    w13, first_weights, first_out = kept[0]
    assert np.array_equal(w13, np.asarray(one(BF16).fixture()["w13"]))
    assert np.array_equal(kept[2][1], 2 * first_weights)  # the linearity probe doubled every router weight
    assert not (first_out == 0x7FA5).any()  # the kernel's first output, every element written


def test_a_python_kernel_reading_rows_it_must_not_fails_token_isolation(tmp_path):
    # EP rank 1 owns no routed token here (routing.edge ep_rank_empty) and holds no shared expert: no x row may be
    # read. The probe poisons those rows with NaN, Inf and huge values; a kernel that multiplies each output row by
    # 1 + (v - v) for its token's x values (exactly 1 for finite v) is right on the clean inputs and NaN on poison.
    suite = tmp_path / "ep.yaml"
    suite.write_text("suite: ep\ndefaults: {hidden: 128, inter: 128, experts: 8, topk: 2}\ncases:\n"
                     "  - {tokens: 4, ep: 2, ep_rank: 1, routing: {edge: ep_rank_empty}}\n")
    (case,) = moe_harness.suite(str(suite))
    host = moe_harness.native_kernel("host")

    def reads_x(fx, out):
        host(fx, out)
        x = np.asarray(fx["x"]).view(np.uint16).astype(np.uint32) << 16  # bf16 bits -> f32 bits
        xf = x.view(np.float32)
        o = np.asarray(out).view(np.uint16).astype(np.uint32) << 16
        of = (o.view(np.float32) * (1 + (xf - xf))).astype(np.float32)
        np.asarray(out).view(np.uint16)[...] = (of.view(np.uint32) >> 16).astype(np.uint16)

    assert case.run(host).passed
    v = case.run(reads_x)
    assert v.status == "fail" and v.failed_check == "token_isolation", (v.status, v.failed_check, v.reason)


def test_a_python_kernel_with_routing_cached_at_its_first_call_fails_token_permutation():
    # The panel's split-K member (NumPy, kernels/panel) reads the fixture every call and passes with the rotation
    # compared by the row bound. Its mutant keeps the expert ids of its first call (the judged run's): right on every
    # run with those ids in place (the rerun, the doubled router weights, the padding alone), wrong once the tokens
    # are rotated with their routing: each row then mixes another token's experts with its own x and weights.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "kernels" / "panel"))
    from panel_members import SplitK

    class StaleIds(SplitK):
        ids = None

        def routed_rows(self, fx, spec):
            if self.ids is None:
                self.ids = np.array(np.asarray(fx["topk_ids"]))
            w = np.asarray(fx["topk_weights"]).astype(np.float32)
            for e in range(spec["shape"]["local_experts"]):
                tok, j = np.nonzero(self.ids == spec["shape"]["first_local_expert"] + e)
                if len(tok):
                    yield e, tok, j, w[tok, j]

    case = one(BF16)
    good = case.run(SplitK())
    assert good.passed and dict(good.probes)["token_permutation"] == "ran", (good.reason, good.probes)
    v = case.run(StaleIds())
    assert v.status == "fail" and v.failed_check == "token_permutation", (v.status, v.failed_check, v.reason)
    assert "rotated by one position" in v.reason and "row bound" in v.reason, v.reason


def test_a_python_kernel_declaring_it_rereads_weights_is_relabeled_and_an_active_set_cached_at_its_first_call_fails():
    # The split-K member reads the expert tensors from each call's fixture and declares rereads_expert_weights: the
    # relabeling runs on it (rows by the row bound) and it passes. Its mutant notes which local experts have tokens
    # at its first call (the judged run) and later skips every other expert, as a launcher that sizes its expert
    # grid once would: right on every run with that routing's experts (the rerun, the doubled router weights, the
    # padding, the rotation, which keeps the set), wrong once two experts exchange labels and one of them had no
    # token: that expert's tokens lose a slot.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "kernels" / "panel"))
    from panel_members import SplitK

    class ActiveSetOfFirstCall(SplitK):
        active = None

        def routed_rows(self, fx, spec):
            rows = list(super().routed_rows(fx, spec))
            if self.active is None:
                self.active = {e for e, *_ in rows}
            return [r for r in rows if r[0] in self.active]

    cases = list(moe_harness.suite("smoke", filter=["*/bf16.a16/silu/T*/decode/atomic", "*ep2r1*"]))
    assert len(cases) >= 4
    caught = 0
    for case in cases:
        good = case.run(SplitK())
        assert good.passed and dict(good.probes)["expert_relabeling"] == "ran", (case.id, good.reason, good.probes)
        v = case.run(ActiveSetOfFirstCall())
        assert v.status in ("pass", "fail"), (case.id, v.status, v.reason)
        if v.status == "fail":
            assert v.failed_check == "expert_relabeling", (case.id, v.failed_check, v.reason)
            assert "relabeled as each other" in v.reason and "row(s) moved" in v.reason, v.reason
            caught += 1
    assert caught >= 1, [c.id for c in cases]


def test_a_kernel_that_writes_once_fails_the_rerun_probe():
    host, calls = moe_harness.native_kernel("host"), []

    def kernel(fx, out):
        calls.append(1)
        if len(calls) == 1:
            host(fx, out)

    v = one(BF16).run(kernel)
    assert v.status == "fail" and v.failed_check == "rerun", v.explain()


def test_a_kernel_that_caches_its_output_fails_the_linearity_probe():
    host, cached = moe_harness.native_kernel("host"), []

    def kernel(fx, out):
        if not cached:
            host(fx, out)
            cached.append(np.asarray(out).copy())
        np.asarray(memoryview(out)).view(np.uint16)[...] = cached[0]

    v = one(BF16).run(kernel)
    assert v.status == "fail" and v.failed_check == "linearity", v.explain()


def test_a_kernel_that_writes_nothing_is_unwritten():
    v = one(BF16).run(lambda fx, out: None)
    assert v.status == "fail" and v.failed_check == "unwritten"


class Declining:
    id = "declining"

    def supports(self, case):
        return "no bf16 here" if case.spec["quant"]["weight"] == "bf16" else None

    def __call__(self, fx, out):
        raise AssertionError("never called for a declined case")


def test_supports_reason_is_a_skip_and_gating_asks_the_device():
    case = one(BF16)
    v = case.run(Declining())
    assert v.status == "skip" and v.kernel == "declining" and "no bf16 here" in v.reason
    assert case.gate(kernel=Declining())[0] == "skip"
    assert case.gate() == ("run", "")
    decision, reason = case.gate(device="cuda")  # this CPU build has no GPU runtime
    assert decision == "skip" and reason.startswith("no GPU")
    assert case.gate(device="cuda", require_device=True)[0] == "fail"


def test_session_writes_runs_report_files(tmp_path):
    schema = json.loads(open(moe_harness_schema()).read())
    host = moe_harness.native_kernel("host")
    with moe_harness.Session(tmp_path / "rep", "my-kernel", "1.2", provenance={"torch": "1.13"}) as s:
        for case in moe_harness.suite("smoke", filter="*/T3/*"):
            s.run(case, host)
        s.add(one(BF16).run(Declining()))
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    jsonschema.validate(report, schema)
    assert report["provenance"]["suite"] == "smoke"
    assert [k["id"] for k in report["provenance"]["kernels"]][:2] == ["my-kernel", "torch"]
    assert [c["status"] for c in report["cases"]] == [v.status for v in s.verdicts]
    assert {c["kernel"] for c in report["cases"]} == {"my-kernel", "declining"}
    cases = ET.parse(tmp_path / "rep" / "junit.xml").getroot().iter("testcase")
    assert len(list(cases)) == len(s.verdicts)
    assert "<html" in (tmp_path / "rep" / "report.html").read_text()
    assert one(BF16).id in (tmp_path / "rep" / "summary.md").read_text()


def moe_harness_schema():
    import os
    return os.environ["MOE_REPORT_SCHEMA"]


def test_a_native_kernel_judged_from_python_never_imports_numpy():
    # NumPy's import costs a process more than the rest of the module together; nothing on this path needs it.
    code = ("import sys, moe_harness\n"
            f"(case,) = moe_harness.suite('smoke', filter='{BF16}')\n"
            "v = case.run(moe_harness.native_kernel('host'))\n"
            "print(v.status, 'numpy' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == ["pass", "False"], (r.stdout, r.stderr[-2000:])


class _DeviceArray:
    """An output in device memory (DLPack device 2, CUDA) that offers only __array__ to reach the host."""

    def __init__(self, host):
        self._host = host

    def __dlpack_device__(self):
        return (2, 0)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._host)


def test_a_device_output_with_only_array_is_copied_through_numpy():
    case = one(BF16)
    out = case.new_output()
    moe_harness.native_kernel("host")(case.fixture(), out)
    assert case.judge(_DeviceArray(np.array(out))).status == "pass"
    bad = np.array(out)
    bad.view(np.uint16)[0, :] ^= 0x4000  # the first token's values far off in any 16-bit float format
    assert case.judge(_DeviceArray(bad)).status == "fail"


def test_envelope_always_adds_the_envelopes_figures_and_keeps_the_verdict():
    # with_envelope never tightens a threshold (verdict/envelope.hpp), so an output passing at the case's own
    # thresholds passes with any envelope, and one failing by 5 % of its scale fails with any legitimate one.
    host = moe_harness.native_kernel("host")

    def scaled(fixture, out):
        host(fixture, out)
        a = np.asarray(out)
        if out.format == "bf16":  # bf16 bits: scale through float32 and truncate back (a 5 % gain stays 5 %)
            f = (a.astype(np.uint32) << 16).view(np.float32) * np.float32(1.05)
            a[...] = (f.view(np.uint32) >> 16).astype(a.dtype)
        else:
            a *= 1.05

    for case_id in ("*fp8*T3*", BF16):
        case = one(case_id) if case_id == BF16 else list(moe_harness.suite("smoke", filter=case_id))[0]
        lazy, always = case.run(host), case.run(host, envelope="always")
        assert lazy.status == always.status == "pass"
        assert lazy.metrics["envelope_members"] == 0 and always.metrics["envelope_members"] > 0
        assert any(k.startswith("envelope_z_scale_") for k in always.metrics)
        bad_lazy, bad_always = case.run(scaled, kernel_id="gain5"), case.run(scaled, kernel_id="gain5", envelope="always")
        assert bad_lazy.status == bad_always.status == "fail"
        assert bad_lazy.failed_check == bad_always.failed_check
    with pytest.raises(moe_harness.Error) as e:
        case.run(host, envelope="sometimes")
    assert e.value.exit_code == 2 and e.value.key == "envelope"


def test_token_probes_false_skips_them_as_the_cli_flag_does():
    host = moe_harness.native_kernel("host")
    case = one(BF16)
    ran = {p for p, status in case.run(host).probes if status == "ran"}
    skipped = dict(case.run(host, token_probes=False).probes)
    assert {"token_isolation", "token_permutation"} <= ran
    assert all(not skipped.get(p, "not run").startswith("ran") for p in ("token_isolation", "token_permutation"))
    with pytest.raises(moe_harness.Error) as e:
        case.run(host, token_probes="no")
    assert e.value.exit_code == 2 and e.value.key == "token_probes"


def test_a_reference_cache_is_shared_by_kernels_with_the_same_contract(tmp_path):
    # suite(reference_cache=DIR) is `run --reference-cache`: the first case.run() stores the case's references and
    # envelope (one file per key), a second kernel with the same contract, from a new suite object over the same
    # directory, reads them (nothing rewritten) and gets the verdict the uncached path gives.
    host = moe_harness.native_kernel("host")
    (case,) = moe_harness.suite("smoke", filter=BF16, reference_cache=tmp_path / "refs")
    first = case.run(host, envelope="always")
    files = sorted((tmp_path / "refs").iterdir())
    assert len(files) == 1, files
    stamp = files[0].stat().st_mtime_ns
    (again,) = moe_harness.suite("smoke", filter=BF16, reference_cache=str(tmp_path / "refs"))
    cached = again.run(moe_harness.native_kernel("host"), envelope="always")
    assert sorted((tmp_path / "refs").iterdir()) == files and files[0].stat().st_mtime_ns == stamp
    plain = one(BF16).run(host, envelope="always")
    for v in (first, cached):
        assert (v.status, v.failed_check) == (plain.status, plain.failed_check) == ("pass", "")
        assert v.metrics == plain.metrics
        assert list(v.token_cos) == list(plain.token_cos)


@pytest.mark.parametrize("bad", [42, "FILE"])
def test_a_reference_cache_that_is_no_directory_is_bad_input(tmp_path, bad):
    if bad == "FILE":
        bad = tmp_path / "a-file"
        bad.write_text("not a directory")
    with pytest.raises(moe_harness.Error) as e:
        moe_harness.suite("smoke", filter=BF16, reference_cache=bad)
    assert e.value.exit_code == 2 and e.value.key == "reference_cache"


def test_case_judge_takes_its_references_from_the_reference_cache(tmp_path):
    # case.fixture() / case.judge() read and fill the same cache as case.run(): a second suite object over the
    # directory judges the same output to the same verdict and rewrites no entry.
    verdicts = []
    for _ in range(2):
        (case,) = moe_harness.suite("smoke", filter=BF16, reference_cache=tmp_path)
        fx = case.fixture()
        out = case.new_output()
        moe_harness.native_kernel("host")(fx, out)
        verdicts.append(case.judge(out))
        if len(verdicts) == 1:
            entries = {f.name: f.stat().st_mtime_ns for f in tmp_path.iterdir()}
    assert len(entries) == 1
    assert {f.name: f.stat().st_mtime_ns for f in tmp_path.iterdir()} == entries
    assert verdicts[0].status == verdicts[1].status == "pass" and verdicts[0].metrics == verdicts[1].metrics
