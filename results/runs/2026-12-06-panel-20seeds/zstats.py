#!/usr/bin/env python3
"""The systematic statistics' z on correct panel members (issue 45: unit variance at T = 1, 4 and 128), from the
JSON lines of `kernels/panel/run_panel.py --envelope always --jsonl FILE` (every judged case with its envelope's
z scales). Per statistic and token count: the number of values, the mean and standard deviation of z / scale (the
scale the envelope gives the statistic, 1 where it gives none) with the sd's 95 % interval under N(0, 1)
(sd of n normals: 1 ± 1.96 / sqrt(2 (n - 1))), the largest |z| / scale and how many passed the statistic's z
threshold. Single-z statistics (gain, rounding_bias, offset, slot_direction) and the Šidák-corrected maxima
(expert_partial, channel_group) should have sd at most 1 within the interval; the uncorrected maxima (channel over
H channels, expert over the local experts, token_gain over T tokens) are the largest of m values: their sd is not 1
and their test is the count past the threshold (0 expected).

Usage: zstats.py FILE.jsonl..."""
import json
import math
import re
import sys
from collections import defaultdict

SINGLE = ("gain", "rounding_bias", "offset", "slot_direction", "expert_partial", "channel_group")
rows = defaultdict(list)  # (statistic, T) -> [(z / scale, threshold)]
members = set()
for path in sys.argv[1:]:
    for line in open(path):
        r = json.loads(line)
        members.add(r["member"])
        t = int(re.search(r"/T(\d+)/", r["id"])[1])
        for name, (z, effect, thr) in r["systematic"].items():
            if z is None or math.isnan(z):
                continue
            scale = r["z_scale"].get(name, 1.0)
            rows[(name, t)].append((z / scale, thr))


def sd(v):
    mu = sum(v) / len(v)
    return mu, math.sqrt(sum((x - mu) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else float("nan")


print(f"members: {', '.join(sorted(members))}")
print("| statistic | T | n | mean z | sd z | sd's 95 % interval under N(0,1) | max \\|z\\| | past threshold |")
print("|---|---|---|---|---|---|---|---|")
for (name, t) in sorted(rows, key=lambda k: (k[0] not in SINGLE, k[0], k[1])):
    v = rows[(name, t)]
    zs = [z for z, _ in v]
    mu, s = sd(zs)
    half = 1.96 / math.sqrt(2 * (len(zs) - 1)) if len(zs) > 1 else float("nan")
    past = sum(1 for z, thr in v if (z if name == "channel" else abs(z)) > thr)
    kind = "" if name in SINGLE else " (max)"
    print(f"| {name}{kind} | {t} | {len(zs)} | {mu:+.2f} | {s:.2f} | {1 - half:.2f}-{1 + half:.2f} | "
          f"{max(abs(z) for z in zs):.2f} | {past} |")
