#!/usr/bin/env python3
"""End to end: `moe-harness run --suite smoke` on this machine exits 0 and writes a report directory whose
report.json validates against the schema, with a JUnit XML and a Markdown summary beside it; every case the host
kernel passed shows its rerun and linearity probes as run.

Usage: check_run_report.py MOE_HARNESS SCHEMA OUT_DIR
"""
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import jsonschema


def main():
    exe, schema_path, out = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run([exe, "run", "--suite", "smoke", "--report-dir", out], capture_output=True, text=True)
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
    tree = ET.parse(f"{out}/junit.xml")
    tests = int(tree.getroot().get("tests"))
    assert tests == s["total"], (tests, s["total"])
    md = open(f"{out}/summary.md").read()
    assert f"{s['pass']} passed" in md, md[:400]
    # The one visible line about the missing GPU.
    assert "no GPU here" in p.stdout, p.stdout[-2000:]
    print(f"report ok: {s}")


if __name__ == "__main__":
    main()
