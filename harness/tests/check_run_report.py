#!/usr/bin/env python3
"""End to end: `moe-harness run --suite smoke` on this machine exits 0 and writes a report directory whose
report.json validates against the schema, with a JUnit XML and a Markdown summary beside it; every case the host
kernel passed shows its rerun and linearity probes as run. Every case carries its time per phase: the phases that
ran took time, the others none, and all of them together fit inside the wall time of the run as this script measured
it; summary.md and report.html show the same sums.

Usage: check_run_report.py MOE_HARNESS SCHEMA OUT_DIR
"""
import json
import math
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import jsonschema


PHASES = ["generate", "fingerprint", "reference", "clone_prepare", "upload", "kernel", "probes", "judge", "write"]


def check_timing(report, wall, md, html):
    totals = dict.fromkeys(PHASES, 0.0)
    for c in report["cases"]:
        t = c["timing"]["phases_s"]
        assert list(t) == PHASES and all(math.isfinite(v) and v >= 0 for v in t.values()), (c["id"], t)
        assert t["upload"] == 0, (c["id"], t)  # the host kernel reads host memory
        if c["status"] == "skip":  # gated out before anything was built: only the record was written
            assert all(t[k] == 0 for k in PHASES if k != "write"), (c["id"], t)
        elif c["status"] == "pass":  # every phase but the upload ran
            assert all(t[k] > 0 for k in PHASES if k not in ("upload", "write")), (c["id"], t)
            assert abs(c["timing"]["reference_s"] - (t["generate"] + t["fingerprint"] + t["reference"])) < 1e-9 + \
                2 * t["fingerprint"], (c["id"], c["timing"])
        for k in PHASES:
            totals[k] += t[k]
    # The cases run one after another and their phases do not overlap: together they fit inside the run.
    assert 0 < sum(totals.values()) < wall, (totals, wall)
    row = re.search(r"Time by phase .*\n\n\|(.*)\|\n\|[-|]*\|\n\|(.*)\|\n", md)
    assert row and [h.strip() for h in row.group(1).split("|")] == PHASES + ["total"], md[-1500:]
    cells = [float(v.split()[0]) for v in row.group(2).split("|")]
    assert all(abs(a - totals[k]) <= 0.006 for a, k in zip(cells, PHASES)), (cells, totals)
    table = re.search(r'<table id="timing".*?</table>', html, re.S)
    assert table, "report.html has no timing table"
    shown = dict(re.findall(r'data-phase="(\w+)">([0-9.]+)<', table.group(0)))
    assert list(shown) == PHASES and all(abs(float(shown[k]) - totals[k]) <= 0.0006 for k in PHASES), (shown, totals)


def main():
    exe, schema_path, out = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(out, ignore_errors=True)
    start = time.monotonic()
    p = subprocess.run([exe, "run", "--suite", "smoke", "--report-dir", out], capture_output=True, text=True)
    wall = time.monotonic() - start
    if p.returncode != 0:
        print(p.stdout[-4000:], p.stderr[-4000:])
        sys.exit(f"moe-harness run exited {p.returncode}")
    report = json.load(open(f"{out}/report.json"))
    jsonschema.validate(report, json.load(open(schema_path)))
    s = report["summary"]
    assert s["total"] > 0 and s["fail"] == 0 and s["error"] == 0, s
    assert s["pass"] >= 20, s
    for c in report["cases"]:
        if c["status"] == "pass":
            assert len(c["token_cos"]) > 0 and c["metrics"]["min_cos"] >= c["metrics"]["threshold_min_cos"], c["id"]
            # The host kernel runs again and is deterministic: the rerun probes ran, and at least one linearity
            # probe; a probe that did not run says why and leaves no mismatch count.
            pr = c["probes"]
            assert pr["rerun"] == pr["rerun_identical"] == "ran" and "rerun_mismatches" in c["metrics"], (c["id"], pr)
            lin = [pr["linearity_all_weights"], pr["linearity_one_expert"]]
            assert "ran" in lin and "linearity_mismatches" in c["metrics"], (c["id"], pr)
            assert all(v == "ran" or v.startswith("not run: ") for v in lin), (c["id"], pr)
            # The token probes ran on every passing case (one extra run) and saw no guard byte written.
            assert pr["red_zones"] == pr["token_isolation"] == "ran" and c["metrics"]["red_zone_bytes"] == 0, (c["id"], pr)
            assert c["metrics"]["token_probe_mismatches"] == 0, (c["id"], c["metrics"])
    tree = ET.parse(f"{out}/junit.xml")
    tests = int(tree.getroot().get("tests"))
    assert tests == s["total"], (tests, s["total"])
    md = open(f"{out}/summary.md").read()
    assert f"{s['pass']} passed" in md, md[:400]
    check_timing(report, wall, md, open(f"{out}/report.html").read())
    # The one visible line about the missing GPU.
    assert "no GPU here" in p.stdout, p.stdout[-2000:]
    print(f"report ok: {s}")


if __name__ == "__main__":
    main()
