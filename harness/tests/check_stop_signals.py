#!/usr/bin/env python3
"""SIGTERM (a CI runner cancelling the job) to every long command, on the host kernel with more work than the test
waits for: the command must end within a few seconds of the signal (STOP_LIMIT_S), exit 143 (128 + SIGTERM,
docs/reliability.md "Stopping"), and leave what it judged written and marked interrupted, never looking like a
complete run. One MODE a ctest test:

  run_jobs        run --jobs 2 --gtest_repeat=1000 on 400 cases: report.json incomplete ("interrupted by SIGTERM"),
                  as many records as the journal holds, each a pass
  run_abandon     run of a plugin whose run() never returns on its one case: the case in flight is abandoned after
                  the grace (its worker killed): no record, not a pass; report.json incomplete naming it
  selftest        selftest --seeds 200 --json: the JSON says interrupted, the counts of the runs judged
  calibrate       calibrate --seeds 50 --json: the JSON says interrupted, runs_judged < runs_queued
  judge_dir       judge --dir --recompute over an export of 100 cases (the outputs: the exported references, all
                  zeros for every other case), SIGTERM at the first FAIL line: report incomplete, fewer records than
                  cases
  tune            tune --out T.csv on a suite of many cases: T.csv not written, the rows tuned in T.csv.partial
  check_table     check-table T.csv --run on a table of many rows: "interrupted", exit 143, no lock written
  export_suite    export --suite: index.json lists the cases not exported with "interrupted by SIGTERM"

Usage: check_stop_signals.py MOE_HARNESS KERNELS_BUILD_DIR WORK_DIR MODE
"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

STOP_LIMIT_S = 6.0  # the grace for cases in flight (2 s) plus writing the reports, on a loaded 2-core CI machine
failures = []


def stop(name, cmd, ready, wait_s=2.0, cwd=None, ready_line=None):
    """Starts cmd, waits until ready() (at most 60 s) and, with ready_line, until a line of its stderr holds that text,
    then wait_s more, and sends SIGTERM; returns (exit code, seconds from the signal to the exit, stdout, stderr) or
    None after recording a failure. Both pipes are read as the command writes them (a full pipe would stall it)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    out_lines, err_lines = [], []
    readers = [threading.Thread(target=lambda f=f, acc=acc: acc.extend(iter(f.readline, "")), daemon=True)
               for f, acc in ((p.stdout, out_lines), (p.stderr, err_lines))]
    for r in readers:
        r.start()
    seen = lambda: ready_line is None or any(ready_line in l for l in list(err_lines))
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None and not (ready() and seen()):
        time.sleep(0.01)
    time.sleep(wait_s)
    if p.poll() is not None:
        for r in readers:
            r.join()
        failures.append(f"{name}: ended (exit {p.returncode}) before the signal: not enough work for the test: "
                        f"{''.join(err_lines)[-400:]}")
        return None
    p.send_signal(signal.SIGTERM)
    t0 = time.time()
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        failures.append(f"{name}: still going 60 s after SIGTERM")
        return None
    took = time.time() - t0
    for r in readers:
        r.join()
    out, err = "".join(out_lines), "".join(err_lines)
    print(f"{name}: exit {p.returncode} {took:.2f} s after SIGTERM")
    if p.returncode != 128 + signal.SIGTERM:
        failures.append(f"{name}: exit {p.returncode}, want 143: {out[-400:]} {err[-800:]}")
    if took > STOP_LIMIT_S:
        failures.append(f"{name}: {took:.1f} s from SIGTERM to the exit (limit {STOP_LIMIT_S} s)")
    return p.returncode, took, out, err


def check(name, cond, what):
    if not cond:
        failures.append(f"{name}: {what}")


def journal_records(rep):
    path = f"{rep}/journal.jsonl"
    if not os.path.exists(path):
        return []
    lines = [json.loads(l) for l in open(path) if l.strip()]
    return [l for l in lines if l["type"] == "record"]


def check_run_report(name, rep, min_records=1):
    path = f"{rep}/report.json"
    if not os.path.exists(path):
        failures.append(f"{name}: no report.json")
        return None
    report = json.load(open(path))
    prov = report["provenance"]
    check(name, prov.get("incomplete") is True and "interrupted by SIGTERM" in prov.get("incomplete_reason", ""),
          f"report.json not marked interrupted: {prov.get('incomplete')} {prov.get('incomplete_reason')!r}")
    records = journal_records(rep)
    check(name, len(report["cases"]) == len(records) >= min_records,
          f"{len(report['cases'])} record(s) in report.json, {len(records)} in the journal (want >= {min_records})")
    journal = [json.loads(l) for l in open(f"{rep}/journal.jsonl") if l.strip()]
    check(name, journal[-1]["type"] == "end" and journal[-1]["interrupted"] == "SIGTERM",
          f"journal ends with {journal[-1]}")
    print(f"  {len(report['cases'])} record(s): {prov.get('incomplete_reason')}")
    return report


def run_jobs(exe, work, kernels):
    rep = f"{work}/rep"
    suite = many_cases_suite(work)
    r = stop("run --jobs 2", [exe, "run", "--suite", suite, "--kernel", "host", "--no-timing", "--jobs", "2",
                              "--report-dir", rep, "--gtest", "--gtest_repeat=1000"],
             lambda: len(journal_records(rep)) > 0)
    if r:
        report = check_run_report("run --jobs 2", rep)
        if report:
            check("run --jobs 2", all(c["status"] == "pass" for c in report["cases"]),
                  "a record of the host kernel that is not a pass")
            check("run --jobs 2", len(report["cases"]) < 400, "every case judged: not enough work for the test")
            check_incomplete_outputs("run --jobs 2", rep, report)


def check_incomplete_outputs(name, rep, report):
    """docs/cli.md "Reports": an interrupted run lists each selected test it did not judge in junit.xml as an error
    "NOT JUDGED: <why>" (never a skip: a CI gate reading junit.xml fails it), and report.html opens with a banner."""
    root = ET.parse(f"{rep}/junit.xml").getroot()
    tests = root.findall(".//testcase")
    errors = [t.find("error") for t in tests if t.find("error") is not None]
    check(name, root.findall(".//skipped") == [], "junit.xml lists skips in a run of passes and unjudged tests")
    check(name, errors and all(e.get("message").startswith("NOT JUDGED: interrupted by SIGTERM") for e in errors),
          f"junit.xml: the unjudged tests are not NOT JUDGED errors: {[e.get('message') for e in errors[:3]]}")
    check(name, len(tests) == len(report["cases"]) + len(errors) and root.get("errors") == str(len(errors))
          and root.get("failures") == "0", f"junit.xml counts {root.attrib} for {len(report['cases'])} judged")
    html = open(f"{rep}/report.html").read()
    check(name, '<p id="incomplete" class="banner">INCOMPLETE RUN: interrupted by SIGTERM' in html,
          "report.html has no INCOMPLETE RUN banner")


def run_abandon(exe, work, kernels):
    rep = f"{work}/rep"
    suite = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_containment.yaml")
    r = stop("run, a case in flight that never ends",
             [exe, "run", "--suite", suite, "--plugin", f"{kernels}/libmoe_faulty_plugin_loop.so", "--filter", "*/T3/*",
              "--no-timing", "--report-dir", rep],
             lambda: os.path.exists(f"{rep}/journal.jsonl") and '"plan"' in open(f"{rep}/journal.jsonl").read())
    if r:
        report = check_run_report("run_abandon", rep, min_records=0)
        if report:
            check("run_abandon", report["cases"] == [], f"records of an abandoned case: {report['cases']}")
            check("run_abandon", "abandoned" in report["provenance"]["incomplete_reason"],
                  "the reason does not name the case abandoned")
        check("run_abandon", "abandoned in flight" in r[3], f"stderr does not say the case was abandoned: {r[3][-600:]}")
        check("run_abandon", r[1] >= 1.5, f"stopped {r[1]:.2f} s after the signal: the case in flight got no grace")


def json_after_stop(name, path):
    if not os.path.exists(path):
        failures.append(f"{name}: {path} not written")
        return None
    j = json.load(open(path))
    check(name, j.get("interrupted") == "SIGTERM", f"the JSON's interrupted is {j.get('interrupted')!r}")
    return j


def selftest(exe, work, kernels):
    out = f"{work}/selftest.json"
    r = stop("selftest", [exe, "selftest", "--seeds", "200", "--json", out], lambda: True)
    if r:
        j = json_after_stop("selftest", out)
        check("selftest", "INTERRUPTED by SIGTERM" in r[2] and "PASS" not in r[2].split("INTERRUPTED")[-1],
              f"stdout: {r[2][-300:]}")
        if j:
            print(f"  {j['clean_runs']} clean run(s) judged, {len(j.get('mutants', {}))} mutant row(s)")
            check("selftest", j["clean_runs"] > 0, "no clean run judged in 2 s")


def calibrate(exe, work, kernels):
    out = f"{work}/calibrate.json"
    r = stop("calibrate", [exe, "calibrate", "--suite", "smoke", "--seeds", "50", "--json", out], lambda: True)
    if r:
        j = json_after_stop("calibrate", out)
        check("calibrate", "INTERRUPTED by SIGTERM" in r[2], f"stdout: {r[2][-300:]}")
        if j:
            print(f"  {j['runs_judged']} of {j['runs_queued']} run(s) judged")
            check("calibrate", 0 < j["runs_judged"] < j["runs_queued"], "runs_judged not between 0 and runs_queued")


def export(exe, suite, out):
    r = subprocess.run([exe, "export", "--suite", suite, "--out", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def judge_dir(exe, work, kernels):
    ex = f"{work}/ex"
    export(exe, many_cases_suite(work, 256, 100), ex)
    index = json.load(open(f"{ex}/index.json"))
    # The program's outputs: each case's exported contract reference (f32) rounded to the case's bf16 output, and all
    # zeros for every other case (from the first): a FAIL line on stderr as each is judged, the signal's cue.
    for i, c in enumerate(index["cases"]):
        d = f"{ex}/{c['dir']}"
        ref = open(f"{d}/reference.safetensors", "rb").read()
        n = struct.unpack("<Q", ref[:8])[0]
        head = json.loads(ref[8:8 + n])
        fix = open(f"{d}/fixture.safetensors", "rb").read()
        fixture_meta = json.loads(fix[8:8 + struct.unpack("<Q", fix[:8])[0]]).get("__metadata__", {})
        t = head["out_contract"]
        b, e = t["data_offsets"]
        words = struct.unpack(f"<{(e - b) // 4}I", ref[8 + n + b:8 + n + e])
        data = struct.pack(f"<{len(words)}H", *[0 if i % 2 == 0 else ((w + 0x7FFF + ((w >> 16) & 1)) >> 16) & 0xFFFF
                                                for w in words])
        header = json.dumps({"out": {"dtype": "BF16", "shape": t["shape"], "data_offsets": [0, len(data)]},
                             "__metadata__": fixture_meta}).encode()
        with open(f"{d}/out.safetensors", "wb") as f:
            f.write(struct.pack("<Q", len(header)) + header + data)
    rep = f"{work}/rep"
    r = stop("judge --dir", [exe, "judge", "--dir", ex, "--recompute", "--report-dir", rep],
             lambda: os.path.exists(rep), wait_s=0.0, ready_line="FAIL ")
    if r:
        report = json.load(open(f"{rep}/report.json")) if os.path.exists(f"{rep}/report.json") else None
        check("judge --dir", report is not None, "no report.json")
        if report:
            prov = report["provenance"]
            check("judge --dir", prov.get("incomplete") is True and "interrupted by SIGTERM" in prov["incomplete_reason"],
                  f"report.json not marked interrupted: {prov.get('incomplete_reason')!r}")
            check("judge --dir", 0 < len(report["cases"]) < len(index["cases"]),
                  f"{len(report['cases'])} record(s) of {len(index['cases'])} cases")
            print(f"  {len(report['cases'])} of {len(index['cases'])} case(s) judged; "
                  f"{sum(c['status'] == 'pass' for c in report['cases'])} passed")


def many_cases_suite(work, size=256, n=400):
    """A suite of n bf16 cases of hidden = inter = size: more than the host kernel judges, tunes or exports in the
    seconds the test waits."""
    path = f"{work}/many-{size}.yaml"
    with open(path, "w") as f:
        f.write(f"suite: many\ndefaults: {{hidden: {size}, inter: {size}, experts: 16, topk: 2}}\ncases:\n"
                "  - sweep: {tokens: [" + ", ".join(str(t) for t in range(1, n + 1)) + "]}\n")
    return path


def tune(exe, work, kernels):
    suite = many_cases_suite(work, 512, 200)
    table = f"{work}/t.csv"
    r = stop("tune", [exe, "tune", "--suite", suite, "--kernel", "host", "--out", table], lambda: True, wait_s=3.0)
    if r:
        check("tune", not os.path.exists(table), "the table was written by an interrupted tune")
        partial = table + ".partial"
        check("tune", os.path.exists(partial) and "interrupted by SIGTERM" in r[2], f"stdout: {r[2][-300:]}")
        if os.path.exists(partial):
            print(f"  {len(open(partial).read().splitlines()) - 1} row(s) in {partial}")


def check_table(exe, work, kernels):
    suite = many_cases_suite(work, 1024, 100)
    table = f"{work}/t.csv"
    r = subprocess.run([exe, "tune", "--suite", suite, "--kernel", "host", "--filter", "*/T1/*", "--out", table],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    ids = subprocess.run([exe, "list", "--suite", suite], capture_output=True, text=True).stdout.split()
    # The tuned row given to every case of the suite: a row per token count, each run by check-table --run.
    lines = open(table).read().splitlines()
    header, row = lines[0], lines[1]
    cols = header.split(",")
    rows = []
    for t, case_id in enumerate(ids, start=1):
        cells = row.split(",")
        cells[cols.index("token")] = str(t)
        cells[cols.index("case_id")] = case_id
        cells[cols.index("shape")] = case_id.replace(f"/T{t}/", "/T*/")
        rows.append(",".join(cells))
    with open(table, "w") as f:
        f.write("\n".join([header] + rows) + "\n")
    lock = f"{work}/lock.json"
    r = stop("check-table --run", [exe, "check-table", table, "--run", suite, "--drift-factor", "1e9", "--lock", lock],
             lambda: True)
    if r:
        check("check-table --run", "interrupted by SIGTERM" in r[2] and "run through the lookup" in r[2],
              f"stdout: {r[2][-600:]}")
        check("check-table --run", not os.path.exists(lock), "a lock written by an interrupted check")


def export_suite(exe, work, kernels):
    out = f"{work}/ex"
    suite = many_cases_suite(work, 1024, 200)
    r = stop("export --suite", [exe, "export", "--suite", suite, "--out", out], lambda: True)
    if r:
        path = f"{out}/index.json"
        check("export --suite", os.path.exists(path), "no index.json")
        if os.path.exists(path):
            cases = json.load(open(path))["cases"]
            done = [c for c in cases if c["exported"]]
            cut = [c for c in cases if not c["exported"]]
            check("export --suite", done and cut and all("interrupted by SIGTERM" in c["reason"] for c in cut),
                  f"{len(done)} exported, {len(cut)} not: {cut[:1]}")
            print(f"  {len(done)} of {len(cases)} case(s) exported, the rest listed as interrupted")


MODES = {f.__name__: f for f in (run_jobs, run_abandon, selftest, calibrate, judge_dir, tune, check_table,
                                 export_suite)}


def main():
    exe, kernels, work, mode = sys.argv[1:5]
    work = os.path.join(work, mode)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    MODES[mode](exe, work, kernels)
    for f in failures:
        print("FAIL", f)
    print(f"{mode}: {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
