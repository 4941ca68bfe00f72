#!/usr/bin/env python3
"""Reports that survive: a run killed with SIGKILL half-way keeps every record it had in its journal; its worker
dies with it; `moe-harness report DIR` rebuilds complete report files from the journal, marked incomplete, whose
records equal an uninterrupted run's; `run --resume DIR` judges only the missing tests and then equals the
uninterrupted run, by `moe-harness compare` (exit 0, no drift) and field by field (every field but the timing:
timing, metrics kernel_us, achieved_tbps, achieved_tflops).
Stale temporary files of the killed run are removed. SIGTERM stops a run after the case in flight (a smoke case
ends well within the 2 s the cases in flight get, docs/reliability.md "Stopping"): exit 143,
reports written and marked incomplete, every selected test either judged or not started; a resume completes it.
SIGINT to the run's process group (a terminal's Ctrl-C) does not reach the worker: the case in flight passes, exit 130.
With JOBS (several worker processes, `--jobs JOBS`, given to every run and resume) the same holds: the cases in
flight when a signal arrives all finish and are reported, none starts after it.

Usage: check_resume.py MOE_HARNESS SCHEMA WORK_DIR [JOBS]
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import jsonschema

ARGS = ["--suite", "smoke", "--kernel", "host", "--no-timing"]


def journal_records(rep):
    try:
        lines = open(f"{rep}/journal.jsonl").read().splitlines()
    except FileNotFoundError:
        return 0
    return sum('"type":"record"' in l for l in lines)


def children(pid):
    try:
        return [int(p) for p in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except FileNotFoundError:
        return []


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for init is gone for our purposes
        return open(f"/proc/{pid}/stat").read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def start_and_signal(exe, rep, sig, after, group=False):
    """Starts a run, sends sig once its journal holds `after` records (to the run's whole process group, as a
    terminal's Ctrl-C does, with group); returns (exit status, worker pids seen, stderr)."""
    p = subprocess.Popen([exe, "run", *ARGS, "--report-dir", rep], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, start_new_session=group)
    workers = set()
    deadline = time.time() + 600
    while journal_records(rep) < after:
        assert p.poll() is None, f"the run ended before {after} records: {p.stderr.read()[-2000:]}"
        assert time.time() < deadline, "no progress"
        workers.update(children(p.pid))
        time.sleep(0.05)
    workers.update(children(p.pid))
    if group:
        os.killpg(p.pid, sig)
    else:
        p.send_signal(sig)
    _, err = p.communicate(timeout=600)
    return p.returncode, workers, err


def cases_by_key(report):
    out = {}
    for c in report["cases"]:
        c = dict(c)
        c.pop("timing")  # timing is the only thing that differs between two runs of the same case
        c["metrics"] = {k: v for k, v in c["metrics"].items() if k not in ("kernel_us", "achieved_tbps", "achieved_tflops")}
        out[(c["kernel"], c["id"])] = c
    return out


def main():
    exe, schema_path, work = sys.argv[1:4]
    if len(sys.argv) > 4:
        ARGS.extend(["--jobs", sys.argv[4]])
    jobs = ARGS[ARGS.index("--jobs") + 1:][:1] if "--jobs" in ARGS else []
    resume_jobs = ["--jobs", *jobs] if jobs else []
    schema = json.load(open(schema_path))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    base = f"{work}/uninterrupted"
    r = subprocess.run([exe, "run", *ARGS, "--report-dir", base], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-2000:]
    base_report = json.load(open(f"{base}/report.json"))
    base_cases = cases_by_key(base_report)
    total = len(base_cases)
    assert total > 20, total

    # SIGKILL half-way: nothing but the journal is written; the worker goes with the supervisor.
    killed = f"{work}/killed"
    rc, workers, _ = start_and_signal(exe, killed, signal.SIGKILL, total // 2)
    assert rc == -signal.SIGKILL, rc
    assert workers, "no worker process was seen"
    time.sleep(1.0)
    assert not [w for w in workers if alive(w)], f"worker(s) outlived the supervisor: {workers}"
    assert not os.path.exists(f"{killed}/report.json")
    stale = f"{killed}/report.json.tmp.999999999"  # as a write cut short leaves it (no such pid)
    open(stale, "w").write("{half a rep")
    kept = journal_records(killed)
    assert total // 2 <= kept < total, kept

    r = subprocess.run([exe, "report", killed], capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, (r.returncode, r.stderr)  # incomplete: never green
    assert not os.path.exists(stale), "the stale temporary file was not removed"
    rebuilt = json.load(open(f"{killed}/report.json"))
    jsonschema.validate(rebuilt, schema)
    assert rebuilt["provenance"]["incomplete"], rebuilt["provenance"]
    assert f"{kept} of the {total} selected test(s)" in rebuilt["provenance"]["incomplete_reason"], rebuilt["provenance"]
    got = cases_by_key(rebuilt)
    assert len(got) == kept
    for k, c in got.items():
        assert c == base_cases[k], (k, c, base_cases[k])
    order = [(c["kernel"], c["id"]) for c in base_report["cases"]]
    # The run's order; with several workers the records a kill leaves need not be a prefix of it (a later case may
    # have finished before an earlier one), one worker's are.
    expected = order[:kept] if not jobs else [k for k in order if k in got]
    assert [(c["kernel"], c["id"]) for c in rebuilt["cases"]] == expected
    # The rebuilt junit.xml names each test as the uninterrupted run's did (KERNEL, CASE), so CI's test history does
    # not see new tests; the journal keeps only the number of tests not judged: one error test says they were not.
    names = lambda f: [(t.get("classname"), t.get("name")) for t in ET.parse(f).getroot().findall(".//testcase")]
    base_names = names(f"{base}/junit.xml")
    want = base_names[:kept] if not jobs else [base_names[order.index(k)] for k in expected]
    assert base_names == order, (base_names[:3], order[:3])
    assert names(f"{killed}/junit.xml") == want + [("moe-harness", "unjudged tests")], names(f"{killed}/junit.xml")[-3:]
    killed_junit = ET.parse(f"{killed}/junit.xml").getroot()
    assert killed_junit.get("errors") == "1", killed_junit.attrib
    assert "INCOMPLETE" in open(f"{killed}/summary.md").read()
    print(f"SIGKILL after {kept} of {total} records: report rebuilt {kept} records equal to the uninterrupted run's")

    # --verbose goes with --resume: a line per test as it ends ("[N/TOTAL] status kernel id (S s)"), replayed or not.
    r = subprocess.run([exe, "run", "--resume", killed, "--verbose", *resume_jobs], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
    judged = sum(re.match(r"\[\d+/\d+\] (pass|fail|skip|error) ", l) is not None for l in r.stderr.splitlines())
    resumed = json.load(open(f"{killed}/report.json"))
    jsonschema.validate(resumed, schema)
    assert not resumed["provenance"]["incomplete"], resumed["provenance"]
    assert cases_by_key(resumed) == base_cases
    assert [(c["kernel"], c["id"]) for c in resumed["cases"]] == order
    journal = [json.loads(l) for l in open(f"{killed}/journal.jsonl")]
    assert sum(l["type"] == "record" for l in journal) == total  # only the missing tests were judged again
    assert judged == total  # every test reported (the journal's replayed)
    r = subprocess.run([exe, "compare", f"{base}/report.json", f"{killed}/report.json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:]
    print(f"resume judged the {total - kept} missing tests; the report equals the uninterrupted run's (compare: exit 0)")

    # The run's command line with --resume: re-derived and compared with the journal's start line; a changed option
    # is refused naming its key, before any work.
    r = subprocess.run([exe, "run", "--resume", killed, *ARGS, "--seed", "3"], capture_output=True, text=True)
    assert r.returncode == 2 and "key 'run.seed'" in r.stderr and "the command line gives 3" in r.stderr, r.stderr

    # SIGTERM: the case in flight finishes, later ones are not judged, reports are written and marked incomplete.
    term = f"{work}/sigterm"
    rc, _, err = start_and_signal(exe, term, signal.SIGTERM, 5)
    assert rc == 128 + signal.SIGTERM, (rc, err[-2000:])
    report = json.load(open(f"{term}/report.json"))
    jsonschema.validate(report, schema)
    p = report["provenance"]
    assert p["incomplete"] and p["incomplete_reason"].startswith("interrupted by SIGTERM"), p
    n = len(report["cases"])
    assert 5 <= n < total and journal_records(term) == n, (n, journal_records(term))
    assert all(cases_by_key(report)[k] == base_cases[k] for k in cases_by_key(report))
    junit = ET.parse(f"{term}/junit.xml").getroot()
    assert len(junit.findall(".//testcase")) == total  # the judged ones, then each unjudged one as an error
    unjudged = [t for t in junit.findall(".//testcase") if t.find("error") is not None]
    assert len(unjudged) == total - n and junit.get("errors") == str(total - n), (len(unjudged), junit.attrib)
    assert all(t.find("error").get("message").startswith("NOT JUDGED: interrupted by SIGTERM") for t in unjudged)
    r = subprocess.run([exe, "run", "--resume", term, *resume_jobs], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    assert cases_by_key(json.load(open(f"{term}/report.json"))) == base_cases
    print(f"SIGTERM after {n} records: exit 143, reports marked incomplete; resume completed it")

    # Ctrl-C reaches the terminal's whole foreground process group: the worker, in a group of its own, finishes the
    # case in flight (no crash record), the run stops after it.
    ctrl_c = f"{work}/sigint"
    rc, _, err = start_and_signal(exe, ctrl_c, signal.SIGINT, 5, group=True)
    assert rc == 128 + signal.SIGINT, (rc, err[-2000:])
    report = json.load(open(f"{ctrl_c}/report.json"))
    assert report["provenance"]["incomplete_reason"].startswith("interrupted by SIGINT"), report["provenance"]
    assert all(c["status"] == "pass" for c in report["cases"]), [(c["id"], c["reason"]) for c in report["cases"] if c["status"] != "pass"]
    print(f"SIGINT to the process group after {len(report['cases'])} records: exit 130, no case lost to it")


if __name__ == "__main__":
    main()
