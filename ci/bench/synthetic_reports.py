#!/usr/bin/env python3
"""Run reports of N cases for timing `compare` and `merge`: reports/tests/synthetic_report.py's nightly-shaped
cases (two kernels, 3% failing, 0.5% errors, 10% skipped) with the decode token counts only (1 to 16 tokens), so a
100,000-case report is about 200 MB of JSON rather than the 0.9 GB the prefill counts would make it.

Usage: synthetic_reports.py N OUT_DIR
  writes OUT_DIR/report-N.json, OUT_DIR/other-N.json (another seed: every metric differs, so compare has findings
  to rank) and OUT_DIR/shard-N-{0,1}.json (the first report's cases split by parity, for merge)
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reports", "tests"))
import numpy as np  # noqa: E402
import synthetic_report as sr  # noqa: E402

sr.TOKEN_MIX = [(t, w) for t, w in sr.TOKEN_MIX if t <= 16]
sr._TOKEN_P = np.array([w for _, w in sr.TOKEN_MIX], dtype=float) / sum(w for _, w in sr.TOKEN_MIX)


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    report = sr.make_report(n, seed=7)
    json.dump(report, open(f"{out}/report-{n}.json", "w"))
    json.dump(sr.make_report(n, seed=8), open(f"{out}/other-{n}.json", "w"))
    for k in (0, 1):
        shard = dict(report, cases=report["cases"][k::2])
        shard["summary"] = {"total": len(shard["cases"]),
                            **{s: sum(c["status"] == s for c in shard["cases"]) for s in ("pass", "fail", "skip", "error")}}
        json.dump(shard, open(f"{out}/shard-{n}-{k}.json", "w"))


if __name__ == "__main__":
    main()
