#!/usr/bin/env python3
"""The systematic statistics' z on correct panel members (issue 45: unit variance at T = 1, 4 and 128), from the
JSON lines of `kernels/panel/run_panel.py --envelope always --jsonl FILE`. Each record's z is already at the
envelope's standard-error scale, and a maximum's z already corrected for its number of components
(verdict/systematic_max.hpp), so on a correct kernel every two-sided statistic's z should have a second moment
E[z^2] of 1 (a scalar: N(0, 1); a maximum: one test's |N(0, 1)|), and `channel`'s (one-sided, conservative by
construction) should pass x no more often than N(0, 1) does. Per statistic and token count: n, mean, sd, the RMS
(sqrt of the mean z^2) with its 95 % interval under the null (sqrt(chi2_n / n): 1 +- 1.96 sqrt(2 / n) inside the
root), the largest |z|, how many values pass 3 (expected 0.27 % of n for a two-sided normal, 0.13 % for channel)
and how many pass the record's own z threshold.

Usage: zstats.py FILE.jsonl..."""
import json
import math
import re
import sys
from collections import defaultdict

rows = defaultdict(list)  # (statistic, T) -> [(z, threshold)]
members = set()
for path in sys.argv[1:]:
    for line in open(path):
        r = json.loads(line)
        members.add(r["member"])
        t = int(re.search(r"/T(\d+)/", r["id"])[1])
        for name, (z, effect, thr) in r["systematic"].items():
            if z is None or math.isnan(z):
                continue
            rows[(name, t)].append((z, thr))

print(f"members: {', '.join(sorted(members))}")
print("| statistic | T | n | mean | sd | RMS | RMS 95 % interval | max \\|z\\| | past 3 | past threshold |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (name, t) in sorted(rows):
    v = rows[(name, t)]
    zs = [z for z, _ in v]
    n = len(zs)
    mu = sum(zs) / n
    sd = math.sqrt(sum((x - mu) ** 2 for x in zs) / (n - 1)) if n > 1 else float("nan")
    rms = math.sqrt(sum(x * x for x in zs) / n)
    h = 1.96 * math.sqrt(2.0 / n)
    lo, hi = math.sqrt(max(0.0, 1 - h)), math.sqrt(1 + h)
    tested = (lambda z: z) if name == "channel" else abs
    past3 = sum(1 for z in zs if tested(z) > 3)
    past = sum(1 for z, thr in v if tested(z) > thr)
    print(f"| {name} | {t} | {n} | {mu:+.2f} | {sd:.2f} | {rms:.2f} | {lo:.2f}-{hi:.2f} | "
          f"{max(abs(z) for z in zs):.2f} | {past3} | {past} |")
