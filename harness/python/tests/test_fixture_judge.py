"""moe_harness suites, fixtures and judge, against what the CLI of the same build writes (`list`, `export`) and what
docs/judging.md and docs/numerics.md state."""
import gc
import json
import os
import re
import subprocess
import weakref

import numpy as np
import pytest
import torch

import moe_harness
from moe_harness.torch import to_torch

FP8 = "custom-h256i256e16k4-softmax_topk/tp1/fp8pt.tok/silu/T12/decode/atomic"
FNUZ = "custom-h256i256e16k4-softmax_topk/tp1/fp8ch-fnuz.tok-q224/silu/T4/decode/atomic"
MXFP4 = "custom-h256i256e16k4-softmax_topk/tp1/mxfp4.a16-rceil/swiglu_oai+bias/T5/decode/atomic"
F16 = "custom-h256i256e16k4-softmax_topk/tp1/fp16.a16/silu/T5/decode/atomic/in-f16/mid-f16/out-f16"
# The format a safetensors dtype (or export's moe.dtype.<tensor> metadata) names, as the format table spells it.
SAFETENSORS_FORMAT = {"BF16": "bf16", "F16": "f16", "F32": "f32", "I32": "i32", "F8_E4M3": "e4m3fn"}


def one(case_id):
    (case,) = moe_harness.suite("smoke", filter=case_id)
    return case


def test_suite_ids_are_the_clis(cli):
    listed = subprocess.run([cli, "list", "--suite", "smoke"], check=True, capture_output=True, text=True).stdout.split()
    s = moe_harness.suite("smoke")
    assert [c.id for c in s] == listed
    assert s.name == "smoke" and s.file.endswith("cases/smoke.yaml")
    fp8 = moe_harness.suite("smoke", filter=["*fp8*", "-*fnuz*"])
    assert [c.id for c in fp8] == [i for i in listed if "fp8" in i and "fnuz" not in i]


def test_bad_suite_is_bad_input_naming_the_fix():
    with pytest.raises(moe_harness.Error) as e:
        moe_harness.suite("no-such-suite")
    assert e.value.exit_code == 2 and e.value.fix
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("case_id", [FP8, FNUZ, MXFP4, F16])
def test_fixture_is_exports_checkpoint_with_formats(export, case_id):
    case = one(case_id)
    fx_file, meta, _ = export(case_id)
    fx = case.fixture()
    assert sorted(fx.keys()) == sorted(fx_file)
    assert fx.fingerprint == int(meta["moe.fixture_fingerprint"], 16)
    for name, want in fx_file.items():
        t = fx[name]
        fmt = meta.get(f"moe.dtype.{name}") or SAFETENSORS_FORMAT[meta[f"safetensors.dtype.{name}"]]
        assert t.format == fmt, name
        a = np.asarray(t)
        assert a.shape == want.shape and t.shape == want.shape, name
        assert a.tobytes() == want.tobytes(), name
    assert json.loads(case._native.json) == case.spec


def test_spec_is_exports_case_json(cli, tmp_path):
    subprocess.run([cli, "export", MXFP4, "--out", str(tmp_path)], check=True, stdout=subprocess.DEVNULL)
    assert one(MXFP4).spec == json.loads((tmp_path / "case.json").read_text())


PYTHON_MD = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "python.md")


def documented_fixture_members():
    """The first column of docs/python.md's fixture table ("What a fixture has"): the members as a kernel writes them."""
    text = open(PYTHON_MD).read()
    table = text[text.index("| member | what it is |", text.index("What a fixture has")):]
    rows = []
    for line in table.splitlines()[2:]:
        if not line.strip().startswith("|"):
            break
        rows.append(re.match(r"\s*\| (.*?) \|", line)[1])
    return rows


def test_the_fixture_has_what_docs_python_md_lists_and_nothing_else():
    """Every member in docs/python.md's fixture table works as it says, on the fixture of case.fixture() and on the one
    `run` hands the kernel; a public member the table lacks fails here (a kernel author finds members there, not by
    dir())."""
    rows = documented_fixture_members()
    assert rows == ["`fx[name]`", "`name in fx`, `fx.keys()`, `len(fx)`", "`fx.spec`", "`fx.case`",
                    "`fx.fingerprint`"], rows
    attributes = {m for row in rows for m in re.findall(r"`fx\.(\w+)", row)}
    case = one(FP8)
    seen = []

    def kernel(fx, out):
        seen.append((fx, sorted(a for a in dir(fx) if not a.startswith("_")), fx.spec, fx.case, fx.fingerprint))
        to_torch(out).zero_()

    case.run(kernel)
    fx = case.fixture()
    for fixture, public, fingerprint in [(fx, sorted(a for a in dir(fx) if not a.startswith("_")), fx.fingerprint),
                                         (seen[0][0], seen[0][1], seen[0][4])]:
        assert set(public) == attributes, f"members not in docs/python.md's table: {set(public) - attributes}"
        names = fixture.keys()
        assert names[-2:] == ["topk_ids", "topk_weights"] and "w13" in names and "x" in names  # checkpoint's, routing
        assert len(fixture) == len(names) and all(n in fixture for n in names) and "nosuch" not in fixture
        t = fixture["w13"]
        assert isinstance(t, moe_harness.Tensor) and t.name == "w13" and not t.writable
        with pytest.raises(KeyError, match="fixture has no tensor 'nosuch'; it has x, "):
            fixture["nosuch"]
    # spec: the case as a dict (export's case.json, test_spec_is_exports_case_json); case: the moe_harness.Case.
    assert fx.spec == case.spec and seen[0][2] == case.spec and seen[0][2]["shape"]["tokens"] == 12
    assert fx.case is case and seen[0][3] is case and (case.id, case.suite.name) == (FP8, "smoke")
    assert re.fullmatch(r".*smoke\.yaml:\d+", case.source), case.source
    # fingerprint: the generated checkpoint's from case.fixture(), 0 in the fixtures `run` hands a kernel.
    assert isinstance(fx.fingerprint, int) and fx.fingerprint != 0 and seen[0][4] == 0


def test_views_share_memory_and_keep_the_fixture_alive():
    case = one(FP8)
    fx = case.fixture()
    a, b = np.asarray(fx["w13"]), np.asarray(fx["w13"])
    assert np.shares_memory(a, b) and not a.flags.writeable
    assert torch.utils.dlpack.from_dlpack(fx["w13"]).data_ptr() == a.ctypes.data
    copy = a.copy()
    del fx, b
    case.release()
    gc.collect()
    assert np.array_equal(a, copy)  # the view still reads the fixture it came from


def test_a_dropped_suite_goes_at_once_and_its_cases_still_name_it():
    # A suite's native handle holds the expert weights its cases share (GBs on the nightly): a Suite and its Cases
    # must form no reference cycle, or a loop over seeds keeps every seed's weights until a cyclic collection.
    gc.disable()
    try:
        suite = moe_harness.suite("smoke", seed=3)
        gone = weakref.ref(suite)
        case = suite[1]
        assert case.suite is suite
        del suite
        assert gone() is None, "the Suite outlived its last reference: a cycle holds it"
        again = case.suite
        assert (again.name, again.seed, len(again), again[1].id) == ("smoke", 3, len(moe_harness.suite("smoke")), case.id)
    finally:
        gc.enable()


def test_to_torch_dtypes_and_bf16_values():
    fx = one(FP8).fixture()
    x = to_torch(fx["x"])
    assert x.dtype == torch.bfloat16
    bits = np.asarray(fx["x"]).astype(np.uint32) << 16  # bf16 is the top half of an fp32 (docs/numerics.md)
    assert np.array_equal(x.float().numpy(), bits.view(np.float32))
    w = to_torch(fx["w13"])
    assert w.dtype == getattr(torch, "float8_e4m3fn", torch.uint8)
    assert to_torch(fx["topk_ids"]).dtype == torch.int32


def bf16_reference(export, case_id):
    """The contract reference of export (f32 values already rounded to bf16) as bf16 bits."""
    _, _, ref = export(case_id)
    bits = ref["out_contract"].view(np.uint32)
    assert not (bits & 0xFFFF).any()
    return (bits >> 16).astype(np.uint16)


def test_judge_of_the_reference_passes_in_every_spelling(export):
    case = one(FP8)
    ref = bf16_reference(export, FP8)
    for out in (ref, torch.from_numpy(ref.view(np.int16)), torch.from_numpy(ref.view(np.int16)).view(torch.bfloat16)):
        v = case.judge(out)
        assert v.status == "pass", v.explain()
        assert v.metrics["min_cos"] == pytest.approx(1.0, abs=1e-12) and v.metrics["max_rel"] == 0.0
        assert v.failed_check == "" and len(v.token_cos) == 12
    o = case.new_output()
    np.asarray(memoryview(o)).view(np.uint16)[...] = ref  # write through the buffer protocol
    assert case.judge(o).passed


def test_judge_of_f16_output(export):
    case = one(F16)
    _, _, ref = export(F16)
    assert case.judge(ref["out_contract"].astype(np.float16)).passed


def test_new_output_is_the_sentinel():
    out = np.asarray(one(FP8).new_output())
    assert out.dtype == np.uint16 and out.shape == (12, 256)
    assert (out == 0x7FA5).all()  # docs/judging.md: the bf16 sentinel
    v = one(FP8).judge(out)
    assert v.status == "fail" and v.failed_check == "unwritten"


def test_judge_failures_name_their_check(export):
    case = one(FP8)
    v = case.judge(np.zeros((12, 256), np.uint16))
    assert v.status == "fail" and v.failed_check == "zero_output" and v.reason.startswith("zero_output")
    assert "zero_output" in v.explain()


def test_judge_refuses_wrong_dtype_shape_layout():
    case = one(FP8)
    with pytest.raises(moe_harness.Error) as e:
        case.judge(np.zeros((12, 256), np.float32))
    assert e.value.exit_code == 2 and "bf16" in e.value.problem and "torch.bfloat16" in e.value.fix
    with pytest.raises(moe_harness.Error) as e:
        case.judge(np.zeros((12, 255), np.uint16))
    assert "[12, 256]" in e.value.problem
    with pytest.raises(moe_harness.Error) as e:
        case.judge(np.zeros((256, 12), np.uint16).T)
    assert "contiguous" in e.value.problem
    with pytest.raises(moe_harness.Error):
        case.judge(torch.zeros(256, 12, dtype=torch.bfloat16).t())
    with pytest.raises(moe_harness.Error) as e:
        case.judge([[0.0] * 256] * 12)
    assert "buffer protocol" in e.value.problem


def test_judge_refuses_a_fixture_written_into(export):
    case = one(FP8)
    fx = case.fixture()
    torch.utils.dlpack.from_dlpack(fx["x"])[0, 0] += 1  # DLPack views share the fixture's memory
    with pytest.raises(moe_harness.Error) as e:
        case.judge(bf16_reference(export, FP8))
    assert "changed" in e.value.problem
    case.release()
    assert case.judge(bf16_reference(export, FP8)).passed  # a fresh fixture
