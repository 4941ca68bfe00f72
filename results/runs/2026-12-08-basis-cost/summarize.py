#!/usr/bin/env python3
"""Per kernel (with its bug), T, statistic and solver over basis_cost.py's JSON lines: outputs, RMS and largest |z|
of the largest corrected z, how many of them are caught (|z| past 6 and the shown effect past the verdict's floor,
8.5e-3 token_gain, 5e-2 expert_partial), the largest |z_solver - z_exact| over any component, and the fits'
milliseconds per token.
  summarize.py FILE.jsonl..."""
import collections
import json
import math
import sys

rows = [json.loads(line) for f in sys.argv[1:] for line in open(f)]
g = collections.defaultdict(list)
READINGS = (("_sf", " sign-flip"), ("_db", " debiased"), ("_t", " student-t"), ("_hc3", " hc3"), ("_hc2", " hc2"))
FLOOR = {"token_gain": 8.5e-3, "expert_partial": 5e-2}


def kern(r):
    return r["kernel"] + (f" x{r['bug']}" if r.get("bug") else "")


for r in rows:
    for stat in ("token_gain", "expert_partial"):
        if stat in r and math.isfinite(r[stat][0]):
            g[(kern(r), r["T"], stat, r["solver"])].append((r, r[stat][0], r.get(stat + "_maxdiff", 0.0), r[stat][1]))
        for suffix, label in READINGS:
            if stat + suffix in r and math.isfinite(r[stat + suffix][0]):
                g[(kern(r), r["T"], stat, r["solver"] + label)].append((r, r[stat + suffix][0], float("nan"),
                                                                       r[stat + suffix][1]))
print("| kernel | T | statistic | solver | n | RMS z | max \\|z\\| | caught | max \\|z - z_exact\\| | fit ms / token | "
      "expert QR s / output |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
def rank(solver):
    s = solver.split()[0]
    return (-1 if s == "exact" else float(s[2:].rstrip("b") or 0) + 0.5 * s.endswith("b"), solver)


for k in sorted(g, key=lambda k: (k[0], k[1], k[2], rank(k[3]))):
    rs = [x[0] for x in g[k]]
    z = [x[1] for x in g[k]]
    d = [x[2] for x in g[k]]
    caught = sum(abs(x[1]) > 6 and abs(x[3]) > FLOOR[k[2]] for x in g[k])
    has_exact = any(x[0].get(k[2] + "_maxdiff") is not None for x in g[k])
    diff = f"{max(d):.3f}" if has_exact and " " not in k[3] else "-"
    ms = 1000 * sum(r["fit_secs"] for r in rs) / sum(r["T"] for r in rs)
    qr = sum(r["setup_secs"] for r in rs) / len(rs)
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {len(z)} | {math.sqrt(sum(x * x for x in z) / len(z)):.2f} | "
          f"{max(abs(x) for x in z):.2f} | {caught} | {diff} | {ms:.0f} | {qr:.2f} |")
