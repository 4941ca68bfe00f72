#!/usr/bin/env python3
"""Which recorded verdicts the floor cap (verdict/envelope.cpp: a floor widens at most 4 x its default) could change,
from the JSON lines `kernels/panel/run_panel.py --jsonl` wrote before it: a statistic fails only when its z passes its
threshold AND its effect passes its floor, the cap leaves every z threshold as it was and lowers a floor only to
4 x its default, so a recorded pass can become a failure only where some statistic's z passed its threshold with
|effect| above 4 x the default floor (the table of docs/judging.md "Systematic errors"; `expert`'s the larger, 5e-3).
Prints, per file group, the verdicts read and, per statistic, the largest |effect| / default among the values whose
z passed the threshold, and every verdict the cap could fail.

Usage: check_cap.py LABEL=GLOB[,GLOB...] ..."""
import glob
import gzip
import json
import sys

DEFAULT = {"gain": 1e-3, "channel": 0.02, "rounding_bias": 0.1, "expert": 5e-3, "offset": 5e-4, "token_gain": 8.5e-3,
           "expert_partial": 5e-2, "slot_direction": 1e-3, "channel_group": 5e-3}
CAP = 4.0

for arg in sys.argv[1:]:
    label, pats = arg.split("=", 1)
    n, worst, flips = 0, {}, []
    for path in sorted({p for pat in pats.split(",") for p in glob.glob(pat, recursive=True)}):
        for line in (gzip.open if path.endswith(".gz") else open)(path, "rt"):
            r = json.loads(line)
            n += 1
            for name, (z, effect, thr) in r["systematic"].items():
                if z is None or effect is None or (z if name == "channel" else abs(z)) <= thr:
                    continue
                q = abs(effect) / DEFAULT[name]
                worst[name] = max(worst.get(name, 0.0), q)
                if q > CAP and r["status"] == "pass":
                    flips.append((r["member"], r["seed"], r["id"], name, z, effect))
    print(f"{label}: {n} verdicts; largest |effect| / default floor where z passed its threshold: " +
          (", ".join(f"{k} {v:.2f}" for k, v in sorted(worst.items())) or "none"))
    for f in flips:
        print(f"  the cap could fail: {f}")
    print(f"  {len(flips)} verdicts the cap could change")
