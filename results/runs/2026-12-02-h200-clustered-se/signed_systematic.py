#!/usr/bin/env python3
"""One line per case of each report.json given: the signed z and effect of the gain, rounding_bias and expert
statistics (the calibration tables keep only the worst |z|), and a last block with, per statistic and report
label, the mean and the extremes of z over the cases. Usage: signed_systematic.py LABEL=REPORT.json..."""
import json
import statistics
import sys

NAMES = ("gain", "rounding_bias", "expert")
pooled = {}
for arg in sys.argv[1:]:
    label, path = arg.split("=", 1)
    for c in json.load(open(path))["cases"]:
        s = c.get("systematic") or {}
        cells = []
        for n in NAMES:
            st = s.get(n) or {}
            z, e = st.get("z"), st.get("effect")
            cells.append(f"{n} z {z:+.2f} effect {e:+.3e}" if z is not None else f"{n} {st.get('status', 'absent')}")
            if z is not None:
                pooled.setdefault((n, label.split('/')[0]), []).append(z)
        print(f"{label} {c['id']} {c['status']}: " + "; ".join(cells))
print()
for (n, label), zs in sorted(pooled.items()):
    print(f"{label} {n}: {len(zs)} cases, mean z {statistics.mean(zs):+.2f}, min {min(zs):+.2f}, max {max(zs):+.2f}")
