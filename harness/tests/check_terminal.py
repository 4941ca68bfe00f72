#!/usr/bin/env python3
"""What `moe-harness run` prints (docs/cli.md "Terminal output"), on a suite written here whose verdicts are known in
advance: two cases whose tolerance (max_rel 1e-12) the host kernel's bf16 rounding exceeds fail, one passes, three
list only the GPU kernel and two are above the host budget (skips with two reasons, the second's numbers differing
per case).

- Not a terminal (CI logs): no carriage return, no escape sequence, no GoogleTest log; the last progress line counts
  every case; each skip reason is one line with its count; each failure is recapped with a command that, run by the
  shell, reruns exactly that case (same kernel, same seed, same verdict and metrics); the path of report.html.
- --verbose adds GoogleTest's own log.
- On a terminal (a pseudo-terminal here): the live line is redrawn with carriage returns and coloured; NO_COLOR
  turns the colour off.
- Each failure's recap is its verdict as pytest prints it: the case's file and line, the metrics, the worst tokens
  with their experts and routing weights; junit.xml (docs/cli.md "Reports") names each test by its case id in a
  testsuite named by the kernel id, and a failure's message is the verdict's reason, no source-file prefix.
- A plugin's failure is rerun through the same --plugin.
- The default report directory, reports-out/<UTC time>, has no ':' in its name (CI artifact uploaders refuse it),
  and two runs never share one.

Usage: check_terminal.py MOE_HARNESS SWAPPED_PLUGIN.so WORK_DIR
"""
import json
import os
import pty
import xml.etree.ElementTree as ET
import re
import shutil
import subprocess
import sys

SUITE = """suite: terminal-check
defaults: {hidden: 256, inter: 256, experts: 16, topk: 4}
cases:
  - {tokens: 16, tolerance: {max_rel: 1.0e-12}}
  - {tokens: 16, reduce: separate, tolerance: {max_rel: 1.0e-12}}
  - {tokens: 3}
  - sweep: {tokens: [2, 4, 5]}
    case: {kernels: [gpu-fused-moe]}
  - sweep: {tokens: [24, 32]}
"""
BUDGET = "3e7"  # FLOP: above the 16-token cases (about 2.5e7), below the 24- and 32-token ones
LISTED = "the case lists kernels [gpu-fused-moe], not host-contract"
BUDGET_REASON = "above the host kernel's budget"
ESC = re.compile(r"\x1b\[")
SGR = re.compile(r"\x1b\[[0-9;]*m")
TIMING = {"kernel_us", "achieved_tbps", "achieved_tflops"}  # measured, not judged: differ between runs
DIR_NAME = re.compile(r"^\d{8}T\d{6}Z(-\d+)?$")


def run(cmd, cwd=None, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env)


def run_on_pty(cmd, env):
    """Runs cmd with stdout and stderr on one pseudo-terminal; returns (exit code, everything it printed)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(cmd[0], cmd, env)
    chunks = []
    while True:
        try:
            b = os.read(fd, 65536)
        except OSError:
            break
        if not b:
            break
        chunks.append(b)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode(errors="replace")


def only_report(cwd):
    dirs = sorted(os.listdir(f"{cwd}/reports-out"))
    assert len(dirs) == 1 and DIR_NAME.match(dirs[0]), dirs
    return json.load(open(f"{cwd}/reports-out/{dirs[0]}/report.json"))


def check_reruns(text, work, original, want_in_cmd):
    """Every recapped failure's rerun command reruns exactly that case, with the same verdict and metrics."""
    reruns = re.findall(r"^\s+rerun: (.+)$", text, re.M)
    failed = [c for c in original["cases"] if c["status"] == "fail"]
    assert failed and len(reruns) == len(failed), (len(reruns), [c["id"] for c in failed], text[-3000:])
    for i, cmd in enumerate(reruns):
        assert want_in_cmd in cmd, (want_in_cmd, cmd)
        cwd = f"{work}/rerun{i}"
        os.makedirs(cwd)
        r = run(["bash", "-c", cmd], cwd=cwd)
        assert r.returncode == 1, (cmd, r.returncode, r.stderr[-2000:])
        (again,) = only_report(cwd)["cases"]
        (first,) = [c for c in failed if (c["kernel"], c["id"]) == (again["kernel"], again["id"])]
        assert again["status"] == "fail" and again["failed_check"] == first["failed_check"], (again, first)
        judged = lambda c: {k: v for k, v in c["metrics"].items() if k not in TIMING}
        assert judged(again) == judged(first), (again["metrics"], first["metrics"])
    return len(reruns)


def check_failure_recaps(stdout, report, suite):
    """Each failure recapped with its case's place in the suite, its metrics and worst tokens (experts, weights)."""
    for c in (c for c in report["cases"] if c["status"] == "fail"):
        head = f"FAIL {c['kernel']} {c['id']}: {c['reason']}"
        assert head in stdout, (head, stdout[-3000:])
        recap = stdout[stdout.index(head):]
        recap = recap[:recap.index("  rerun: ")]
        assert re.search(rf"^  case: {re.escape(suite)}:\d+$", recap, re.M), recap
        assert re.search(r"^  min_cos [0-9.]+ \(token \d+\), max_rel [0-9.e+-]+ \(token \d+\)", recap, re.M), recap
        assert "worst tokens (token: cos, rel, experts, weights):" in recap, recap
        assert re.search(r"^    \d+: cos [0-9.]+, rel [0-9.e+-]+, experts \[\d+(, \d+){3}\], weights \[[0-9.]+(, [0-9.]+){3}\]$",
                         recap, re.M), recap


def check_junit(path, report):
    """junit.xml: one testsuite per kernel named by its id, each test named by its case id (as report.json spells
    it), a failure's message the verdict's reason with no source file in it."""
    root = ET.parse(path).getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["host-contract"], [s.get("name") for s in suites]
    tests = suites[0].findall("testcase")
    assert [t.get("name") for t in tests] == [c["id"] for c in report["cases"]], [t.get("name") for t in tests]
    for t, c in zip(tests, report["cases"]):
        failure = t.find("failure")
        assert (failure is not None) == (c["status"] == "fail"), (c["id"], c["status"])
        if failure is not None:
            assert failure.get("message") == f"FAIL {c['reason']}", (failure.get("message"), c["reason"])
            assert not re.search(r"\.(cpp|hpp|h):\d+", failure.get("message") + failure.text), failure.text
            assert "worst tokens" in failure.text, failure.text


def main():
    exe, swapped, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    suite = f"{work}/terminal-check.yaml"
    open(suite, "w").write(SUITE)
    base = [exe, "run", "--suite", suite, "--kernel", "host", "--host-budget", BUDGET, "--seed", "7", "--no-timing"]

    # Not a terminal.
    r = run(base + ["--report-dir", f"{work}/plain"])
    out = r.stdout + r.stderr
    assert r.returncode == 1, (r.returncode, out[-3000:])
    rep = json.load(open(f"{work}/plain/report.json"))
    n = len(rep["cases"])
    statuses = sorted(c["status"] for c in rep["cases"])
    assert n == 8 and statuses == ["fail"] * 2 + ["pass"] + ["skip"] * 5, statuses
    assert "\r" not in out and not ESC.search(out), repr(out[-1500:])
    assert "[ RUN      ]" not in out, out[-1500:]
    last = [l for l in r.stderr.splitlines() if re.search(rf"\b{n}/{n}\b", l)]
    assert last and re.search(r"\b1 pass", last[-1]) and re.search(r"\b2 fail", last[-1]) \
        and re.search(r"\b5 skip", last[-1]), r.stderr[-2000:]
    # Skips grouped by reason: one line per reason with its count; the numbers of the budget reason differ per case.
    assert out.count(LISTED) == 1 and re.search(rf"^\s*3 skipped\s+host-contract: {re.escape(LISTED)}", out, re.M), out
    assert out.count(BUDGET_REASON) == 1 and re.search(rf"^\s*2 skipped\s+host-contract: .*{BUDGET_REASON}", out, re.M)
    html = re.findall(r"(\S+/report\.html)\b", r.stdout)
    assert html and os.path.samefile(html[-1], f"{work}/plain/report.html"), r.stdout[-1500:]
    k = check_reruns(r.stdout, work, rep, "--seed 7")
    check_failure_recaps(r.stdout, rep, suite)
    check_junit(f"{work}/plain/junit.xml", rep)

    # --verbose: GoogleTest's log too.
    r = run(base + ["--report-dir", f"{work}/verbose", "--verbose"])
    assert r.returncode == 1 and "[ RUN      ]" in r.stdout + r.stderr, r.stdout[-1500:]

    # On a terminal: carriage returns and colour; NO_COLOR: no colour.
    env = dict(os.environ, TERM="xterm")
    env.pop("NO_COLOR", None)
    rc, tty_out = run_on_pty(base + ["--report-dir", f"{work}/tty"], env)
    assert rc == 1 and "\r" in tty_out and SGR.search(tty_out), repr(tty_out[-1500:])
    rc, tty_out = run_on_pty(base + ["--report-dir", f"{work}/tty-nocolor"], dict(env, NO_COLOR="1"))
    assert rc == 1 and "\r" in tty_out and not SGR.search(tty_out), repr(tty_out[-1500:])

    # A plugin's failure reruns through the same --plugin.
    r = run([exe, "run", "--suite", "smoke", "--plugin", swapped, "--filter", "*T3/decode/atomic", "--no-timing",
             "--report-dir", f"{work}/plugin"])
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    k += check_reruns(r.stdout, f"{work}/p", json.load(open(f"{work}/plugin/report.json")), f"--plugin {swapped}")

    # The default report directory: no ':' in its name, one per run.
    os.makedirs(f"{work}/default")
    for _ in range(2):
        r = run([exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", "*T1/decode/atomic", "--no-timing"],
                cwd=f"{work}/default")
        assert r.returncode == 0, r.stderr[-2000:]
    dirs = sorted(os.listdir(f"{work}/default/reports-out"))
    assert len(dirs) == 2 and all(DIR_NAME.match(d) for d in dirs), dirs
    print(f"terminal ok: {n} cases, skips grouped, {k} reruns each reproduce their case, tty and NO_COLOR, dirs {dirs}")


if __name__ == "__main__":
    main()
