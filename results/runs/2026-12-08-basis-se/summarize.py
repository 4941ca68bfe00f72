#!/usr/bin/env python3
"""RMS, largest |z| and count past 6 of the largest corrected z per statistic, standard error (hc0 / basis), kernel
and T, over basis_se.py's JSON lines; with a bug, the count of verdicts where the shown component's z passes 6.
  summarize.py FILE.jsonl..."""
import collections
import json
import math
import sys

rows = [json.loads(line) for f in sys.argv[1:] for line in open(f)]
groups = collections.defaultdict(list)
for r in rows:
    for stat in ("token_gain", "expert_partial"):
        for se in ("hc0", "basis", "hc0_nostep", "basis_nostep"):
            v = r.get(f"{stat}_{se}")
            if v is not None and math.isfinite(v[0]):
                groups[(r["kernel"], r["bug"] or 1.0, stat, r["T"], se)].append((v[0], v[1]))
FLOOR = {"token_gain": 8.5e-3, "expert_partial": 5e-2}
print("| kernel | bug | statistic | T | se | n | RMS z | max \\|z\\| | past 6 | caught |")
print("|---|---|---|---|---|---|---|---|---|---|")
for k in sorted(groups):
    z = [x for x, _ in groups[k]]
    rms = math.sqrt(sum(x * x for x in z) / len(z))
    caught = sum(abs(x) > 6 and abs(f) > FLOOR[k[2]] for x, f in groups[k])
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {len(z)} | {rms:.2f} | {max(abs(x) for x in z):.2f} | "
          f"{sum(abs(x) > 6 for x in z)} | {caught} |")
