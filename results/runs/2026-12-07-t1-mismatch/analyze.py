#!/usr/bin/env python3
"""Summarizes capture.py's files: per GPU member and GEMM (K), the error of the hardware's fp8 GEMM as a fraction of
||a_i|| ||w_j|| over every T1 fp8 case and seed captured, against the envelope's accumulation model at N bits
(reference/moe/ensemble.cpp: 2^-N (xi - sign v), xi uniform with unit variance: mean |e| 1.155 2^-N, largest
2.73 2^-N); then the verdicts' mismatch fractions against the envelope's limits.

  analyze.py DIR [N]      (N: the declared bits, 14 by default)
"""
import collections
import glob
import json
import os
import sys

import numpy as np

d = sys.argv[1]
bits = int(sys.argv[2]) if len(sys.argv) > 2 else 14
unit = 2.0 ** -bits
err = collections.defaultdict(list)
for f in sorted(glob.glob(os.path.join(d, "gemm-*.npz"))):
    z = np.load(f)
    for key in z.files:
        if key.endswith("/err"):
            member, case_id, g = key[:-4].split("|")
            k = int(z[key[:-4] + "/k"])
            err[(member, k)].append(z[key].ravel())
print(f"fp8 GEMM error / (||a|| ||w||), in units of 2^-{bits}; the model: mean |e| 1.155, sd 1.41, largest 2.73")
print("| member | K | elements | mean |e| | sd | p99 |e| | max |e| | mean e | beyond 2.73 |")
print("|---|---|---|---|---|---|---|---|---|")
for (member, k), v in sorted(err.items()):
    e = np.concatenate(v).astype(np.float64) / unit
    a = np.abs(e)
    print(f"| {member} | {k} | {e.size} | {a.mean():.3f} | {e.std():.3f} | {np.percentile(a, 99):.3f} | {a.max():.3f} | "
          f"{e.mean():+.3f} | {np.mean(a > 2.73):.2e} |")
rows = [json.loads(line) for f in sorted(glob.glob(os.path.join(d, "verdicts-*.jsonl"))) for line in open(f)]
print(f"\n{len(rows)} verdicts; not pass: {sum(r['status'] != 'pass' for r in rows)}")
print("| member | case | seeds | largest mismatch (seed) | its limit | envelope's largest there | mismatch / limit, max |")
print("|---|---|---|---|---|---|---|")
by = collections.defaultdict(list)
for r in rows:
    by[(r["member"], r["id"])].append(r)
for (member, cid), rs in sorted(by.items()):
    w = max(rs, key=lambda r: (r["mismatch_fraction"] or 0))
    ratio = max((r["mismatch_fraction"] or 0) / r["limit"] for r in rs if r["limit"])
    short = cid.split("/")[2]
    print(f"| {member} | {short} | {len(rs)} | {w['mismatch_fraction']:.2e} ({w['seed']}) | {w['limit']:.2e} | "
          f"{w['envelope_max']:.2e} | {ratio:.2f} |")
for r in rows:
    if r["status"] != "pass":
        print(f"not pass: {r['member']} seed {r['seed']} {r['id']}: {r['failed_check']}")
