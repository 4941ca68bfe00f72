#!/usr/bin/env python3
"""Per-instruction stall samples from `ncu --section SourceCounters --page source --print-source sass --csv`:
the kernel's samples by stall reason, then the instructions holding the most samples.
Usage: ncu_pc_top.py NCU_SOURCE_CSV [N]"""
import csv
import sys

rows = list(csv.reader(open(sys.argv[1], errors="replace")))
n_top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
hi = [i for i, r in enumerate(rows) if r[:2] == ["Address", "Source"]][0]
h = rows[hi]
data = [r for r in rows[hi + 1:] if len(r) == len(h)]
ix = {n: i for i, n in enumerate(h)}


def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


reasons = [n for n in h if n.startswith("stall_") and "Not Issued" not in n]
total = sum(num(d[ix["Warp Stall Sampling (All Samples)"]]) for d in data)
print(f"{len(data)} SASS instructions, {total:.0f} stall samples, "
      f"{sum(num(d[ix['Instructions Executed']]) for d in data):.0f} warp instructions executed")
for n, v in sorted(((n, sum(num(d[ix[n]]) for d in data)) for n in reasons), key=lambda x: -x[1])[:10]:
    print(f"  {n:26s} {v:8.0f} {100 * v / total:5.1f}%")
print(f"\ntop {n_top} instructions (offset from the kernel's first, SASS, samples, top reasons):")
base = int(data[0][0], 16)
for d in sorted(data, key=lambda d: -num(d[ix["Warp Stall Sampling (All Samples)"]]))[:n_top]:
    s = num(d[ix["Warp Stall Sampling (All Samples)"]])
    top = sorted(((num(d[ix[n]]), n[6:]) for n in reasons), reverse=True)[:3]
    print(f"  +{int(d[0], 16) - base:05x} {d[1][:58]:58s} {s:6.0f} {100 * s / total:5.1f}%  "
          + " ".join(f"{b}={a:.0f}" for a, b in top if a > 0))
