"""moe_harness.safetensors (NumPy only): a file laid out by hand as the format states it reads back; an export of
`moe-harness export` reads as the fixture the module hands a kernel; an output written with it is judged by
`moe-harness judge` (the export route from a pip install alone); malformed files and wrong pairings are bad input."""
import json
import struct
import subprocess

import numpy as np
import pytest

import moe_harness
from moe_harness import safetensors

FP8 = "custom-h256i256e16k4-softmax_topk/tp1/fp8pt.tok/silu/T12/decode/atomic"


def test_a_file_laid_out_by_hand_reads_back(tmp_path):
    # The format: u64 little-endian header length, the JSON header, the tensors' little-endian bytes.
    header = {"__metadata__": {"k": "v"}, "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
              "b": {"dtype": "BF16", "shape": [1, 1], "data_offsets": [8, 10]}}
    h = json.dumps(header).encode()
    (tmp_path / "t.safetensors").write_bytes(struct.pack("<Q", len(h)) + h + struct.pack("<ff", 1.5, -2.0)
                                             + struct.pack("<H", 0x3F80))
    tensors, meta = safetensors.read(tmp_path / "t.safetensors")
    assert meta == {"k": "v"} and list(tensors) == ["a", "b"]
    assert tensors["a"][0] == "F32" and tensors["a"][1].tolist() == [1.5, -2.0]
    assert tensors["b"][0] == "BF16" and tensors["b"][1].shape == (1, 1)
    assert safetensors.to_float32(*tensors["b"]).tolist() == [[1.0]]  # 0x3F80 is bfloat16 1.0
    # bfloat16 rounding to nearest even: 1 + 2^-8 is halfway between 1.0 (0x3F80) and 1 + 2^-7 (0x3F81), even wins.
    assert safetensors.bf16_bits(np.float32([1 + 2**-8, 1 + 3 * 2**-8, np.nan])).tolist() == [0x3F80, 0x3F82, 0x7FC0]


def test_write_then_read_keeps_dtypes_shapes_values_and_metadata(tmp_path):
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    ids = np.array([[3, 1]], dtype=np.int32)
    safetensors.write(tmp_path / "o.safetensors", {"x": x, "ids": ids, "w": ("F8_E4M3", np.uint8([0x38]))},
                      {"moe.case": "c"})
    tensors, meta = safetensors.read(tmp_path / "o.safetensors")
    assert meta == {"moe.case": "c"} and list(tensors) == ["x", "ids", "w"]
    assert tensors["x"][0] == "F16" and np.array_equal(tensors["x"][1], x)
    assert tensors["ids"][0] == "I32" and tensors["ids"][1].tolist() == [[3, 1]]
    assert tensors["w"] == ("F8_E4M3", tensors["w"][1]) and tensors["w"][1].tolist() == [0x38]


def test_an_export_reads_as_the_fixture_and_its_output_is_judged(cli, tmp_path):
    subprocess.run([cli, "export", FP8, "--suite", "smoke", "--out", str(tmp_path / "ex")], check=True,
                   stdout=subprocess.DEVNULL)
    tensors, meta = safetensors.read(tmp_path / "ex" / "fixture.safetensors")
    case = next(c for c in moe_harness.suite("smoke", filter=FP8))
    fx = case.fixture()
    assert sorted(tensors) == sorted(fx.keys())
    for name, (_, a) in tensors.items():
        assert a.tobytes() == np.asarray(fx[name]).tobytes(), name
    assert int(meta["moe.fixture_fingerprint"], 16) == fx.fingerprint
    # The reference's contract output, rounded to the case's output dtype: what a correct external kernel writes.
    ref, _ = safetensors.read(tmp_path / "ex" / "reference.safetensors")
    out_dtype = case.spec["dtypes"]["output"]
    y = ref["out_contract"][1]
    out = ("BF16", safetensors.bf16_bits(y)) if out_dtype == "bf16" else y.astype(np.float16)
    safetensors.write(tmp_path / "out.safetensors", {"out": out},
                      {"moe.fixture_fingerprint": meta["moe.fixture_fingerprint"]})
    r = subprocess.run([cli, "judge", FP8, "--suite", "smoke", "--output", str(tmp_path / "out.safetensors"),
                        "--report-dir", str(tmp_path / "rep")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert json.loads((tmp_path / "rep" / "report.json").read_text())["cases"][0]["status"] == "pass"


def test_malformed_files_and_wrong_pairings_are_bad_input(tmp_path):
    (tmp_path / "short").write_bytes(b"\x10\x00")
    (tmp_path / "past").write_bytes(struct.pack("<Q", 1000) + b"{}")
    h = json.dumps({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}).encode()
    (tmp_path / "offsets").write_bytes(struct.pack("<Q", len(h)) + h + bytes(8))
    for name, key in (("short", "header"), ("past", "header"), ("offsets", "a")):
        with pytest.raises(moe_harness.Error) as e:
            safetensors.read(tmp_path / name)
        assert e.value.exit_code == 2 and e.value.key == key and str(tmp_path / name) in e.value.where, name
    with pytest.raises(moe_harness.Error) as e:
        safetensors.write(tmp_path / "w", {"out": ("BF16", np.float32([1.0]))})
    assert e.value.key == "out" and "uint16" in e.value.fix and not (tmp_path / "w").exists()
