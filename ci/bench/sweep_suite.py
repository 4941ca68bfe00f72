#!/usr/bin/env python3
"""A suite of N valid cases for timing suite loading: a small custom shape (H 256, I 256, E 16, top-4) over
reduce x stage x tokens, so every case has its own id.

Usage: sweep_suite.py N OUT.yaml [sweep|flat]
  sweep  one entry whose `sweep:` expands to N cases (reduce [atomic, separate] x stage [one_stage, two_stage] x
         tokens 1..N/4); N a multiple of 4
  flat   N entries, one case each (the same N cases), under one `defaults:` block (what a generated sweep of another
         project looks like)
"""
import sys

REDUCE = ["atomic", "separate"]
STAGE = ["one_stage", "two_stage"]
SHAPE = "{hidden: 256, inter: 256, experts: 16, topk: 4}"


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    form = sys.argv[3] if len(sys.argv) > 3 else "sweep"
    if n % 4 or form not in ("sweep", "flat"):
        sys.exit("usage: sweep_suite.py N OUT.yaml [sweep|flat]  (N a multiple of 4)")
    tokens = n // 4
    with open(out, "w") as f:
        f.write(f"suite: load-{form}-{n}\ndefaults: {SHAPE}\ncases:\n")
        if form == "sweep":
            f.write(f"  - sweep:\n      reduce: [{', '.join(REDUCE)}]\n      stage: [{', '.join(STAGE)}]\n")
            f.write("      tokens: [" + ", ".join(str(t) for t in range(1, tokens + 1)) + "]\n")
        else:
            for t in range(1, tokens + 1):
                for s in STAGE:
                    for r in REDUCE:
                        f.write(f"  - {{tokens: {t}, stage: {s}, reduce: {r}}}\n")


if __name__ == "__main__":
    main()
