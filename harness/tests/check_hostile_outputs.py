#!/usr/bin/env python3
"""The hostile inputs of issue 48 (items 1 to 4), one ITEM a ctest test, each asserting the exit code
docs/reliability.md documents and the key the message names (`key 'KEY'`), and what the refusal left untouched.

  aliasing     an output option naming an input file, for every command that writes: exit 2 naming both options,
               the input's bytes unchanged
  path_limits  --junit with a 300-byte name (a GoogleTest abort before), --report-dir of 4096 bytes or with a
               300-byte component, export --out with a 300-byte component: exit 2 naming the option, nothing judged
  concurrent   two runs into one --report-dir: the second exits 2 naming the first's pid and command, the first's
               report is whole; a run killed with SIGKILL leaves its lock, which the next run takes over with a notice
  journal      a journal's start line, plan, end and record lines edited: `report DIR` and `run --resume DIR` exit 2
               naming the key; `run --resume DIR` given the run's command line with one option changed: exit 2
               naming run.<key>, the journal untouched; given the run's own: exit 0

Usage: check_hostile_outputs.py MOE_HARNESS WORK_DIR ITEM
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

TIMEOUT = 300
failures = []


def run(*args):
    try:
        return subprocess.run(list(args), capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None


def expect(name, r, code, key, *needles):
    if r is None:
        failures.append(f"{name}: no answer within {TIMEOUT} s")
        return
    want = ([f"key '{key}'"] if key else []) + list(needles)
    missing = [n for n in want if n not in r.stderr]
    if r.returncode != code or missing:
        failures.append(f"{name}: exit {r.returncode} (want {code}); stderr lacks {missing}: {r.stderr.strip()[-600:]}")
    else:
        print(f"ok {name}: exit {code}")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def aliasing(exe, work):
    suite = f"{work}/s.yaml"
    shutil.copy(os.path.join(os.path.dirname(__file__), "../../cases/smoke.yaml"), suite)
    for name in ("t.csv", "a.csv", "b.csv", "r.json", "a.json", "b.json", "o.safetensors"):
        write(f"{work}/{name}", f"the input {name}\n")
    os.makedirs(f"{work}/d", exist_ok=True)
    shutil.copy(suite, f"{work}/d/report.json")
    os.makedirs(f"{work}/e", exist_ok=True)
    shutil.copy(suite, f"{work}/e/index.json")
    w = work
    smoke_case = "*T1/*"
    cases = [  # (name, argv, the output's option, the input's option, the input file)
        ("check-table --lock", ["check-table", f"{w}/t.csv", "--lock", f"{w}/t.csv"], "--lock", "tables", "t.csv"),
        ("check-table --lock 2nd", ["check-table", f"{w}/a.csv", f"{w}/b.csv", "--lock", f"{w}/b.csv"], "--lock",
         "tables", "b.csv"),
        ("html --out", ["html", f"{w}/r.json", "--out", f"{w}/r.json"], "--out", "REPORT", "r.json"),
        ("compare --json", ["compare", f"{w}/a.json", f"{w}/b.json", "--json", f"{w}/a.json"], "--json", "BASE",
         "a.json"),
        ("compare --markdown", ["compare", f"{w}/a.json", f"{w}/b.json", "--markdown", f"{w}/./b.json"], "--markdown",
         "NEW", "b.json"),
        ("run --json", ["run", "--suite", suite, "--kernel", "host", "--report-dir", f"{w}/r1", "--json", suite],
         "--json", "--suite", "s.yaml"),
        ("run --junit", ["run", "--suite", suite, "--kernel", "host", "--report-dir", f"{w}/r2", "--junit", suite],
         "--junit", "--suite", "s.yaml"),
        ("run --report-dir", ["run", "--suite", f"{w}/d/report.json", "--kernel", "host", "--report-dir", f"{w}/d"],
         "--report-dir", "--suite", "d/report.json"),
        ("tune --out", ["tune", "--suite", suite, "--filter", smoke_case, "--out", suite], "--out", "--suite", "s.yaml"),
        ("merge --out", ["merge", f"{w}/a.json", f"{w}/b.json", "--out", f"{w}/b.json"], "--out", "REPORT", "b.json"),
        ("selftest --json", ["selftest", "--suite", suite, "--seeds", "1", "--json", suite], "--json", "--suite",
         "s.yaml"),
        ("calibrate --json", ["calibrate", "--suite", suite, "--seeds", "1", "--json", suite], "--json", "--suite",
         "s.yaml"),
        ("export --out", ["export", "--suite", f"{w}/e/index.json", "--filter", smoke_case, "--out", f"{w}/e"],
         "--out", "--suite", "e/index.json"),
        ("html --baseline", ["html", f"{w}/r.json", "--baseline", f"{w}/a.json", "--out", f"{w}/a.json"], "--out",
         "--baseline", "a.json"),
        ("tune --merge-into", ["tune", "--suite", suite, "--filter", smoke_case, "--merge-into", suite],
         "--merge-into", "--suite", "s.yaml"),
    ]
    for name, argv, out_key, in_key, in_file in cases:
        before = read(f"{w}/{in_file}")
        expect(name, run(exe, *argv), 2, out_key, f"({in_key})", "would destroy the input")
        if read(f"{w}/{in_file}") != before:
            failures.append(f"{name}: the input {in_file} was changed by a refused command")
    # judge CASE: the output file judged is an input of the run's reports.
    r = run(exe, "list", "--suite", "smoke")
    case = next(l.split()[0] for l in r.stdout.splitlines() if "/T1/" in l)
    expect("judge --json", run(exe, "judge", case, "--output", f"{w}/o.safetensors", "--report-dir", f"{w}/r3",
                               "--json", f"{w}/o.safetensors"), 2, "--json", "(--output)")
    # judge --dir: the export's index.json is an input of the reports it writes.
    one_case = "*bf16.a16/silu/T1/decode/atomic"
    r = run(exe, "export", "--suite", "smoke", "--filter", one_case, "--out", f"{w}/x")
    if r is None or r.returncode != 0:
        failures.append(f"export for judge --dir failed: {r and r.stderr[-600:]}")
    else:
        before = read(f"{w}/x/index.json")
        expect("judge --dir --json", run(exe, "judge", "--dir", f"{w}/x", "--report-dir", f"{w}/r4", "--json",
                                         f"{w}/x/index.json"), 2, "--json", "(--dir)", "would destroy the input")
        if read(f"{w}/x/index.json") != before:
            failures.append("judge --dir --json: the export's index.json was changed by a refused command")
    # report DIR: the files it rebuilds are the run's (run.json, run.junit); a start line whose run.json names the
    # run's suite file (its digest matching, as the run would have written it) is refused before anything is written.
    r = run(exe, "run", "--suite", suite, "--kernel", "host", "--filter", one_case, "--no-timing", "--report-dir",
            f"{w}/r5")
    if r is None or r.returncode != 0:
        failures.append(f"run for report DIR failed: {r and r.stderr[-600:]}")
    else:
        lines = [json.loads(l) for l in open(f"{w}/r5/journal.jsonl")]
        lines[0]["run"]["json"] = lines[0]["run"]["suite_file"]
        text = json.dumps(lines[0]["run"]["json"], ensure_ascii=False, separators=(",", ":"))
        lines[0]["run_digest"]["json"] = hashlib.sha256(text.encode()).hexdigest()[:16]
        write(f"{w}/r5/journal.jsonl", "".join(json.dumps(l) + "\n" for l in lines))
        before = read(suite)
        expect("report DIR", run(exe, "report", f"{w}/r5"), 2, "run.json", "(run.suite_file)", "would destroy the input")
        if read(suite) != before:
            failures.append("report DIR: the suite was changed by a refused command")
    for d in ("r1", "r2", "r3", "r4"):
        if os.path.exists(f"{w}/{d}"):
            failures.append(f"refused run left {d}")


def path_limits(exe, work):
    long = "x" * 300
    base = [exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", "*T1/*"]
    r = run(*base, "--report-dir", f"{work}/j", "--junit", f"{work}/j/{long}.xml")
    expect("--junit 300-byte name", r, 2, "--junit", "NAME_MAX")
    if r is not None and "PASS" in r.stdout + r.stderr:
        failures.append("--junit 300-byte name: cases were judged before the refusal")
    deep = work + "/" + "/".join(["d" * 200] * 21)
    expect("--report-dir 4096 bytes", run(*base, "--report-dir", deep), 2, "--report-dir", "PATH_MAX")
    expect("--report-dir 300-byte component", run(*base, "--report-dir", f"{work}/{long}"), 2, "--report-dir",
           "NAME_MAX")
    expect("export --out 300-byte component", run(exe, "export", "--suite", "smoke", "--filter", "*T1/*", "--out",
                                                  f"{work}/{long}"), 2, "--out", "NAME_MAX")
    for d in ("j", long):
        if os.path.exists(f"{work}/{d}"):
            failures.append(f"a refused command left {work}/{d[:20]}")


def wait_for(path, proc, seconds=60):
    end = time.time() + seconds
    while time.time() < end and not os.path.exists(path) and proc.poll() is None:
        time.sleep(0.05)
    return os.path.exists(path)


def concurrent(exe, work):
    d = f"{work}/shared"
    first = subprocess.Popen([exe, "run", "--suite", "smoke", "--kernel", "host", "--report-dir", d],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait_for(f"{d}/journal.jsonl", first):
        failures.append("the first run never started its journal")
    second = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--no-timing", "--report-dir", d)
    expect("second run into a held report dir", second, 2, "--report-dir",
           f"another run is writing into this report directory: pid {first.pid} (", "run --suite smoke")
    out, err = first.communicate(timeout=TIMEOUT)
    if first.returncode != 0:
        failures.append(f"the first run exited {first.returncode}: {err[-600:]}")
    report = json.load(open(f"{d}/report.json"))
    lines = [json.loads(l) for l in open(f"{d}/journal.jsonl")]
    plan = next(l["tests"] for l in lines if l["type"] == "plan")
    starts = sum(l["type"] == "start" for l in lines)
    if len(report["cases"]) != plan or starts != 1 or report["provenance"]["incomplete"]:
        failures.append(f"the first run's report is not whole: {len(report['cases'])} cases of {plan}, {starts} starts")
    else:
        print(f"ok the first run's report is whole: {plan} cases, one start line")
    if os.path.exists(f"{d}/.moe-run.lock"):
        failures.append("the lock file outlived its run")
    # SIGKILL: the kernel drops the flock; the lock file stays and the next run takes it over, saying so.
    k = f"{work}/killed"
    victim = subprocess.Popen([exe, "run", "--suite", "smoke", "--kernel", "host", "--report-dir", k],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(f"{k}/journal.jsonl", victim)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    if not os.path.exists(f"{k}/.moe-run.lock"):
        failures.append("a killed run left no lock file (the takeover is not exercised)")
    expect("a run into a killed run's dir", run(exe, "run", "--suite", "smoke", "--kernel", "host", "--filter",
                                                "*T1/*", "--report-dir", k), 0, None,
           f"took over the report directory from pid {victim.pid} (")


def journal(exe, work):
    d = f"{work}/run"
    r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", "*T1/*", "--no-timing", "--report-dir", d)
    assert r is not None and r.returncode == 0, r and r.stderr[-2000:]
    lines = open(f"{d}/journal.jsonl").read().splitlines()
    edits = [  # (name, edit of the parsed lines or the text, key)
        ("run.seed 7", lambda ls: ls[0]["run"].update(seed=7), "run.seed"),
        ("run.seed -1", lambda ls: ls[0]["run"].update(seed=-1), "run.seed"),
        ("run.host_budget -5", lambda ls: ls[0]["run"].update(host_budget=-5), "run.host_budget"),
        ("run.host_budget 1000", lambda ls: ls[0]["run"].update(host_budget=1000.0), "run.host_budget"),
        ("interrupted SIGKILL", lambda ls: ls[-1].update(interrupted="SIGKILL"), "interrupted"),
        ("plan 2^64-1", lambda ls: ls[1].update(tests=2**64 - 1), "tests"),
        ("a record at slot 99999", lambda ls: ls[2].update(slot=99999), "slot"),
        ("a second start line", lambda ls: ls.insert(1, ls[0]), "type"),
        ("an end line mid-file", lambda ls: ls.insert(2, ls[-1]), "type"),
        ("an unknown line type", lambda ls: ls.insert(2, {"type": "note"}), "type"),
        ("a resume line naming 42", lambda ls: ls.insert(2, {"type": "resume", "harness_commit": 42}), "harness_commit"),
    ]
    for name, edit, key in edits:
        ls = [json.loads(l) for l in lines]
        edit(ls)
        e = f"{work}/{name.replace(' ', '_')}"
        shutil.rmtree(e, ignore_errors=True)
        os.makedirs(e)
        write(f"{e}/journal.jsonl", "".join(json.dumps(l) + "\n" for l in ls))
        expect(f"report: {name}", run(exe, "report", e), 2, key)
        expect(f"resume: {name}", run(exe, "run", "--resume", e), 2, key)
        if os.path.exists(f"{e}/report.json"):
            failures.append(f"{name}: a refused journal got a report.json")
    # A start line without its run_digest: `report` rebuilds from it, a resume cannot tell its options from edited ones.
    ls = [json.loads(l) for l in lines]
    del ls[0]["run_digest"]
    e = f"{work}/no_digest"
    os.makedirs(e, exist_ok=True)
    write(f"{e}/journal.jsonl", "".join(json.dumps(l) + "\n" for l in ls))
    expect("report: no run_digest", run(exe, "report", e), 0, None)
    expect("resume: no run_digest", run(exe, "run", "--resume", e), 2, "run_digest")
    e = f"{work}/bom"
    os.makedirs(e, exist_ok=True)
    write(f"{e}/journal.jsonl", "\ufeff" + "\n".join(lines) + "\n")
    expect("report: a BOM", run(exe, "report", e), 2, "type", "byte order mark")
    # run --resume given the run's own command line: its options are re-derived and compared with the start line key
    # by key; one that differs is refused naming it, before any work.
    own = ["--suite", "smoke", "--kernel", "host", "--filter", "*T1/*", "--no-timing", "--report-dir", d]
    differing = [("another --filter", ["--filter", "*T2/*"], "run.filters"), ("--seed 7", ["--seed", "7"], "run.seed"),
                 ("another --json", ["--json", f"{work}/r.json"], "run.json")]
    before = read(f"{d}/journal.jsonl")
    for name, extra, key in differing:
        expect(f"resume with {name}", run(exe, "run", "--resume", d, *own, *extra), 2, key, "the command line gives")
    timed = [a for a in own if a != "--no-timing"]
    expect("resume without the run's --no-timing", run(exe, "run", "--resume", d, *timed), 2, "run.timing")
    expect("resume with another --report-dir", run(exe, "run", "--resume", d, *own[:-1], f"{work}/elsewhere"), 2,
           "--report-dir")
    if read(f"{d}/journal.jsonl") != before:
        failures.append("a refused resume wrote into the journal")
    expect("resume with the run's own options", run(exe, "run", "--resume", d, *own), 0, None)


ITEMS = {"aliasing": aliasing, "path_limits": path_limits, "concurrent": concurrent, "journal": journal}


def main():
    exe, work, item = sys.argv[1:4]
    work = os.path.join(work, item)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ITEMS[item](exe, work)
    for f in failures:
        print("FAIL", f)
    print(f"{item}: {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
