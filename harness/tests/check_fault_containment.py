#!/usr/bin/env python3
"""Fault containment through the plugin ABI: kernels whose run() segfaults, aborts, calls exit(0), loops forever,
throws a C++ exception or allocates memory without bound on one case (the 3-token case of fault_containment.yaml)
each cost exactly that case, recorded as an error naming what happened, while the cases before and after it pass
(the one after it in a new worker), and the run writes complete reports: report.json (valid against the schema),
junit.xml, summary.md, report.html and a journal with every record. The loop is stopped by the case's timeout_s,
then by --case-timeout (which wins). With --no-isolation a segfault kills the harness, as documented, and
`moe-harness report DIR` rebuilds the reports of the cases judged before it from the journal, marked incomplete.

Usage: check_fault_containment.py MOE_HARNESS PLUGIN_DIR SCHEMA WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "fault_containment.yaml")
FAULT_TOKENS = "/T3/"

# kind: (failed_check, needle in the reason, whether the plugin's own stderr line must be in the record's details)
EXPECTED = {
    "segfault": ("crash", "killed by signal 11 (SIGSEGV", True),
    "abort": ("crash", "killed by signal 6 (SIGABRT", True),
    "exit0": ("crash", "exited with status 0 before it returned a record", True),
    "loop": ("timeout", "ran past its time limit of 20.0 s (timeout_s in " + SUITE, True),
    "throw": ("harness_error", "unexpected exception: faulty plugin: an exception escaped run()", False),
    "alloc": ("out_of_memory", "the worker's resident memory reached", True),
}


def check_reports(rep, schema, n_cases):
    report = json.load(open(f"{rep}/report.json"))
    jsonschema.validate(report, schema)
    assert len(report["cases"]) == n_cases, len(report["cases"])
    junit = ET.parse(f"{rep}/junit.xml").getroot()
    assert len(junit.findall(".//testcase")) == n_cases
    summary = open(f"{rep}/summary.md").read()
    # The case table (from its header row to the first line that is not a table row): header + one row per case.
    lines = summary.split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("| status |"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    assert sum(l.startswith("| ") for l in lines[start:end]) == n_cases + 1, summary
    assert os.path.getsize(f"{rep}/report.html") > 0
    journal = [json.loads(l) for l in open(f"{rep}/journal.jsonl")]
    assert journal[0]["type"] == "start" and journal[-1]["type"] == "end", (journal[0]["type"], journal[-1]["type"])
    assert sum(l["type"] == "record" for l in journal) == n_cases
    assert not [f for f in os.listdir(rep) if ".tmp." in f], os.listdir(rep)
    return report


def main():
    exe, plugins, schema_path, work = sys.argv[1:5]
    schema = json.load(open(schema_path))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for kind, (check, needle, own_stderr) in EXPECTED.items():
        rep = f"{work}/{kind}"
        # alloc must be stopped by the memory limit, not the case's 20 s: on a loaded 2-core machine touching the
        # ~4 GiB of the limit took longer than that (--case-timeout wins over timeout_s).
        extra = ["--case-timeout", "240"] if kind == "alloc" else []
        r = subprocess.run([exe, "run", "--suite", SUITE, "--plugin", f"{plugins}/libmoe_faulty_plugin_{kind}.so",
                            "--report-dir", rep, *extra], capture_output=True, text=True, timeout=300)
        assert r.returncode == 3, (kind, r.returncode, r.stderr[-3000:])  # an error case: exit 3 (docs/cli.md "Exit codes")
        report = check_reports(rep, schema, 5)
        assert not report["provenance"]["incomplete"], kind
        for c in report["cases"]:
            if FAULT_TOKENS in c["id"]:
                assert c["status"] == "error" and c["failed_check"] == check, (kind, c["status"], c["failed_check"], c["reason"])
                assert needle in c["reason"], (kind, c["reason"])
                if own_stderr:
                    assert f"faulty plugin: {kind} on a 3-token case" in c["details"], (kind, c["details"])
            else:
                assert c["status"] == "pass", (kind, c["id"], c["status"], c["reason"])
        print(f"{kind}: one {check} case, 4 passed, reports complete")

    # --case-timeout beats the case's timeout_s.
    rep = f"{work}/loop-cli"
    r = subprocess.run([exe, "run", "--suite", SUITE, "--plugin", f"{plugins}/libmoe_faulty_plugin_loop.so",
                        "--case-timeout", "2", "--report-dir", rep], capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, r.stderr[-2000:]
    c = [c for c in check_reports(rep, schema, 5)["cases"] if FAULT_TOKENS in c["id"]][0]
    assert c["failed_check"] == "timeout" and "time limit of 2.0 s (--case-timeout)" in c["reason"], c["reason"]
    print("loop with --case-timeout 2: stopped at 2 s")

    # In process there is no containment: the segfault ends the harness; the journal keeps the two cases before it.
    rep = f"{work}/no-isolation"
    r = subprocess.run([exe, "run", "--suite", SUITE, "--plugin", f"{plugins}/libmoe_faulty_plugin_segfault.so",
                        "--no-isolation", "--report-dir", rep], capture_output=True, text=True, timeout=300)
    assert r.returncode == -11, r.returncode
    assert not os.path.exists(f"{rep}/report.json")
    r = subprocess.run([exe, "report", rep], capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, (r.returncode, r.stderr)  # the run did not finish: never green
    report = json.load(open(f"{rep}/report.json"))
    jsonschema.validate(report, schema)
    assert report["provenance"]["incomplete"] and "did not finish" in report["provenance"]["incomplete_reason"]
    assert [c["status"] for c in report["cases"]] == ["pass", "pass"], [c["status"] for c in report["cases"]]
    assert "INCOMPLETE" in open(f"{rep}/summary.md").read()
    # The 2 records, then one error test: the journal keeps only the number of the tests it did not judge.
    junit = ET.parse(f"{rep}/junit.xml").getroot()
    assert [t.get("name") for t in junit.findall(".//testcase")][2:] == ["unjudged tests"], junit.findall(".//testcase")
    assert len(junit.findall(".//testcase")) == 3 and junit.get("errors") == "1", junit.attrib
    print("--no-isolation: the segfault killed the harness; `report` rebuilt the 2 cases judged before it")


if __name__ == "__main__":
    main()
