#!/usr/bin/env python3
"""Which seeds of the whole nightly each panel member was judged at, from the runs' JSON lines (default
logs/nightly-shard*.jsonl.gz beside this file; plain or gzipped; a verdict judged twice, by a killed run and a later
one, counted once), and how many did not pass.

Usage: summary.py [GLOB...]"""
import collections
import glob
import gzip
import json
import os
import sys

pats = sys.argv[1:] or [os.path.join(os.path.dirname(os.path.abspath(__file__)), "logs", "nightly-shard*.jsonl.gz")]
seen = {}
for f in sorted({f for p in pats for f in glob.glob(p)}):
    for line in (gzip.open if f.endswith(".gz") else open)(f, "rt"):
        r = json.loads(line)
        seen[(r["member"], r["seed"], r["id"])] = r["status"]
cases = {i for (_, _, i) in seen}
by = collections.defaultdict(set)
for (m, s, i) in seen:
    by[(m, s)].add(i)
print(f"{len(seen)} verdicts over {len(cases)} cases; not pass: {sum(v != 'pass' for v in seen.values())}")
print("| member | whole nightly (120 cases) at seeds | part of it (cases) at seeds |")
print("|---|---|---|")
for m in sorted({m for (m, _) in by}):
    seeds = sorted(s for (mm, s) in by if mm == m)
    whole = [s for s in seeds if len(by[(m, s)]) == len(cases)]
    part = ", ".join(f"{s} ({len(by[(m, s)])})" for s in seeds if len(by[(m, s)]) < len(cases))
    print(f"| {m} | {', '.join(map(str, whole))} | {part} |")
