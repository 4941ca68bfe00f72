#!/usr/bin/env python3
"""`moe-harness export CASE --out DIR` writes the documented contract: fixture.safetensors, reference.safetensors and
case.json, readable by a plain safetensors parser written here (struct + json, no library).

Usage: check_export.py MOE_HARNESS OUT_DIR
"""
import json
import shutil
import struct
import subprocess
import sys


def read_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))


def main():
    exe, out = sys.argv[1], sys.argv[2]
    shutil.rmtree(out, ignore_errors=True)
    ids = subprocess.run([exe, "list", "--suite", "smoke", "--filter", "*mxfp4.a16*swiglu_oai*T5*"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert len(ids) == 1, ids
    subprocess.run([exe, "export", ids[0], "--out", out], check=True, capture_output=True)
    case = json.load(open(f"{out}/case.json"))
    assert case["id"] == ids[0]
    T, H = case["shape"]["tokens"], case["shape"]["hidden"]
    I, E, k = case["shape"]["local_inter"], case["shape"]["local_experts"], case["shape"]["topk"]
    fx = read_header(f"{out}/fixture.safetensors")
    meta = fx.pop("__metadata__")
    assert meta["moe.case_id"] == ids[0]
    assert fx["x"]["dtype"] == "BF16" and fx["x"]["shape"] == [T, H]
    assert fx["router_logits"]["dtype"] == "F32" and fx["router_logits"]["shape"] == [T, case["shape"]["experts"]]
    assert fx["topk_ids"]["dtype"] == "I32" and fx["topk_ids"]["shape"] == [T, k]
    assert fx["topk_weights"]["shape"] == [T, k]
    # MXFP4: packed U8 with the last dimension halved, e8m0 scales named in the metadata.
    assert fx["w13"]["dtype"] == "U8" and fx["w13"]["shape"] == [E, 2 * I, H // 2]
    assert meta["moe.dtype.w13"] == "e2m1x2" and meta["moe.dtype.w13_scale"] == "e8m0"
    assert fx["w13_scale"]["shape"] == [E, 2 * I, H // 32]
    assert fx["w2"]["shape"] == [E, H, I // 2]
    assert fx["w13_bias"]["shape"] == [E, 2 * I] and fx["w2_bias"]["shape"] == [E, H]
    ref = read_header(f"{out}/reference.safetensors")
    ref.pop("__metadata__")
    assert ref["out_contract"] == {"dtype": "F32", "shape": [T, H], "data_offsets": ref["out_contract"]["data_offsets"]}
    assert ref["out_ideal"]["shape"] == [T, H]
    # An unknown case id is bad input (exit 2).
    bad = subprocess.run([exe, "export", "no/such/case", "--out", out], capture_output=True, text=True)
    assert bad.returncode == 2 and "no case with id" in bad.stderr, (bad.returncode, bad.stderr)
    print("export ok:", ids[0])


if __name__ == "__main__":
    main()
