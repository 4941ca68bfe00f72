#!/usr/bin/env python3
"""Malformed case files: `moe-harness list --suite FILE` exits 2 and stderr names the file, the line and the key.

Usage: check_bad_case_files.py MOE_HARNESS WORK_DIR
"""
import os
import subprocess
import sys

HEAD = "suite: bad\ndefaults: {hidden: 64, inter: 64, experts: 8, topk: 2}\ncases:\n"
CASES = {
    # name: (file body, line, key)
    "unknown_key": (HEAD + "  - {tokens: 1, tokenz: 2}\n", 4, "tokenz"),
    "wrong_type": (HEAD + "  - {tokens: two}\n", 4, "tokens"),
    "unknown_enum": (HEAD + "  - {tokens: 1, quant: {weight: int3}}\n", 4, "quant.weight"),
    "topk_gt_experts": (HEAD + "  - {tokens: 1, topk: 64}\n", 4, "topk"),
    "swiglu_chunked": (HEAD + "  - {tokens: 1, activation: swiglu_oai, layout: up_gate}\n", 4, "layout"),
    "mx_k_not_32": (HEAD + "  - {tokens: 1, hidden: 48, quant: {weight: mxfp8, act: mxfp8}}\n", 4, "quant.weight"),
    "duplicate_id": (HEAD + "  - {tokens: 1}\n  - {tokens: 1}\n", 5, "variant"),
    "loosened_without_reason": (HEAD + "  - {tokens: 1, tolerance: {max_rel: 0.5}}\n", 4, "tolerance.max_rel"),
    "yaml_syntax": (HEAD + "  - {tokens: [1, 2}\n", 4, ""),
}


def main():
    exe, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    bad = 0
    for name, (body, line, key) in CASES.items():
        path = os.path.join(work, name + ".yaml")
        with open(path, "w") as f:
            f.write(body)
        p = subprocess.run([exe, "list", "--suite", path], capture_output=True, text=True)
        want_where = f"{path}:{line}"
        ok = p.returncode == 2 and want_where in p.stderr and (not key or f"'{key}'" in p.stderr) and "Fix:" in p.stderr
        if not ok:
            bad += 1
            print(f"{name}: exit {p.returncode}, stderr: {p.stderr.strip()} (wanted exit 2, {want_where}, key {key!r})")
        else:
            print(f"{name}: ok: {p.stderr.strip()}")
    missing = subprocess.run([exe, "list", "--suite", os.path.join(work, "nope.yaml")], capture_output=True, text=True)
    if missing.returncode != 2:
        bad += 1
        print(f"missing file: exit {missing.returncode}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
