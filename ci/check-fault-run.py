#!/usr/bin/env python3
"""Checks a run in which one case faulted (ci/gpu-fault-containment): the run exited 3 (an error case); its reports
are complete (report.json not marked incomplete, junit.xml, summary.md, report.html, a journal ending in its end
line, one record per selected test); exactly one record is an error, the fault case, with the expected failed_check
and a reason naming the fault; every other record passed, the one right after the fault case included (judged by a
fresh worker). Prints PASS or FAIL with the evidence; exit 0 or 1.

Usage: check-fault-run.py REPORT_DIR EXIT_STATUS FAULT_CASE_ID FAILED_CHECK REASON_NEEDLE
"""
import json
import os
import sys
import xml.etree.ElementTree as ET


def main():
    rep, status, fault_id, check, needle = sys.argv[1:6]
    problems = []
    if status != "3":
        problems.append(f"exit status {status}, not 3")
    try:
        report = json.load(open(f"{rep}/report.json"))
    except (OSError, ValueError) as e:
        print(f"FAIL {rep}: no readable report.json ({e})")
        return 1
    cases = report["cases"]
    journal = [json.loads(l) for l in open(f"{rep}/journal.jsonl")]
    plan = [l["tests"] for l in journal if l["type"] == "plan"]
    if report["provenance"].get("incomplete"):
        problems.append("report marked incomplete: " + report["provenance"].get("incomplete_reason", ""))
    if journal[-1]["type"] != "end":
        problems.append("the journal has no end line")
    if not plan or plan[0] != len(cases):
        problems.append(f"{len(cases)} records for {plan} selected tests")
    if sum(l["type"] == "record" for l in journal) != len(cases):
        problems.append("journal records differ from report.json's")
    if len(ET.parse(f"{rep}/junit.xml").getroot().findall(".//testcase")) != len(cases):
        problems.append("junit.xml lacks test cases")
    for f in ("summary.md", "report.html"):
        if not os.path.getsize(f"{rep}/{f}"):
            problems.append(f"{f} is empty")
    errors = [c for c in cases if c["status"] == "error"]
    others = [c for c in cases if c["id"] != fault_id and c["status"] != "pass"]
    index = [i for i, c in enumerate(cases) if c["id"] == fault_id]
    if len(errors) != 1 or errors[0]["id"] != fault_id:
        problems.append(f"error records: {[(c['id'], c['failed_check']) for c in errors]}")
    elif errors[0]["failed_check"] != check or needle not in errors[0]["reason"]:
        problems.append(f"fault record {errors[0]['failed_check']}: {errors[0]['reason']}")
    if others:
        problems.append(f"{len(others)} other case(s) did not pass: {[(c['id'], c['status'], c['reason']) for c in others[:5]]}")
    if not index or index[0] + 1 >= len(cases) or cases[index[0] + 1]["status"] != "pass":
        problems.append("no passing case right after the fault case")
    if problems:
        print(f"FAIL {rep}: " + "; ".join(problems))
        return 1
    e = errors[0]
    print(f"PASS {rep}: case {index[0] + 1} of {len(cases)} is the one error ({e['failed_check']}: {e['reason'][:200]}); "
          f"the other {len(cases) - 1} passed, {cases[index[0] + 1]['id']} right after it; reports complete")
    return 0


if __name__ == "__main__":
    sys.exit(main())
