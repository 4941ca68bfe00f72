#!/usr/bin/env python3
"""Every file a command reads, and every output path it is given, when it is not what the command needs: exit 2 with
a message naming the file (and the key or option), promptly, never exit 3 "internal error", never a hang.

Inputs: report.json of compare (both), gate, merge and html (and its --baseline); suites of run, list, gate --policy
and merge --expect-suite; the safetensors output of judge. Each as a directory, /dev/zero, a FIFO without a writer
and a (sparse) file above its input limit (suites 64 MiB, reports 4 GiB); reports also with a field missing or of the wrong type. A report
whose non-finite numbers are null (as the writer spells them) is read. Outputs: --junit, --json and --report-dir of
run, export --out, html --out, compare --json/--markdown, calibrate/selftest --json, each a directory where a file
goes, under a regular file, or a file where a directory goes; refused before any work, leaving nothing written.

Usage: check_bad_inputs.py MOE_HARNESS WORK_DIR
"""
import copy
import json
import os
import shutil
import subprocess
import sys

TIMEOUT = 30  # seconds; every refusal here takes well under one, a hang or a full run does not
SUITE_LIMIT, REPORT_LIMIT = 64 << 20, 4 << 30


def run(*args):
    try:
        return subprocess.run(list(args), capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None


failures = []


def expect(name, r, code, needles):
    if r is None:
        failures.append(f"{name}: no answer within {TIMEOUT} s (hang)")
        return
    missing = [n for n in needles if n not in r.stderr]
    if r.returncode != code or missing:
        failures.append(f"{name}: exit {r.returncode} (want {code}); stderr lacks {missing}: {r.stderr.strip()[-400:]}")
    else:
        print(f"{name}: exit {code}: {r.stderr.strip()[:160]}")


def main():
    exe, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    p = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", "*T1/*", "--report-dir", f"{work}/good")
    assert p is not None and p.returncode == 0, p and (p.stdout[-2000:] + p.stderr[-2000:])
    good = f"{work}/good/report.json"
    report = json.load(open(good))
    case_id = report["cases"][0]["id"]

    # Paths that are not regular files, or too large.
    os.makedirs(f"{work}/adir")
    os.mkfifo(f"{work}/fifo")
    big_suite, big_report = f"{work}/big.yaml", f"{work}/big.json"
    with open(big_suite, "wb") as f:
        f.truncate(SUITE_LIMIT + 1)
    with open(big_report, "wb") as f:
        f.truncate(REPORT_LIMIT + 1)
    specials = {"directory": (f"{work}/adir", "is a directory"), "dev_zero": ("/dev/zero", "is a character device"),
                "fifo": (f"{work}/fifo", "is a FIFO")}
    report_specials = dict(specials, over_limit=(big_report, "exceeds the limit of 4 GiB"))
    suite_specials = dict(specials, over_limit=(big_suite, "exceeds the limit of 64 MiB"))

    # Reports with a field missing or mistyped: the key named in full.
    def edited(name, edit):
        r = copy.deepcopy(report)
        edit(r)
        path = f"{work}/{name}.json"
        json.dump(r, open(path, "w"))
        return path
    broken = {
        "no_metrics": (edited("no_metrics", lambda r: r["cases"][0].pop("metrics")), "cases[0].metrics"),
        "status_number": (edited("status_number", lambda r: r["cases"][0].update(status=1)), "cases[0].status"),
        "token_cos_text": (edited("token_cos_text", lambda r: r["cases"][1]["token_cos"].__setitem__(0, "x")),
                           "cases[1].token_cos[0]"),
        "no_device": (edited("no_device", lambda r: r["provenance"].pop("device")), "provenance.device"),
        "kernels_object": (edited("kernels_object", lambda r: r["provenance"].update(kernels={})), "provenance.kernels"),
        "cases_missing": (edited("cases_missing", lambda r: r.pop("cases")), "cases"),
    }
    positions = {
        "compare BASE": lambda f: [exe, "compare", f, good],
        "compare NEW": lambda f: [exe, "compare", good, f],
        "gate REPORT": lambda f: [exe, "gate", "--policy", "smoke", f],
        "merge REPORT": lambda f: [exe, "merge", good, f, "--out", f"{work}/merged.json"],
        "html REPORT": lambda f: [exe, "html", f, "--out", f"{work}/r.html"],
        "html --baseline": lambda f: [exe, "html", good, "--baseline", f, "--out", f"{work}/r.html"],
    }
    for pos, cmd in positions.items():
        for kind, (path, needle) in report_specials.items():
            expect(f"{pos} {kind}", run(*cmd(path)), 2, [path, needle])
        for kind, (path, key) in broken.items():
            expect(f"{pos} {kind}", run(*cmd(path)), 2, [path, f"key '{key}'"])
    for out in ("merged.json", "r.html"):
        if os.path.exists(f"{work}/{out}"):
            failures.append(f"a refused command wrote {out}")

    # null for non-finite numbers (a metric, per-token values): read back as NaN, not refused.
    nulls = edited("nulls", lambda r: (r["cases"][0]["metrics"].update(max_rel=None),
                                       r["cases"][0]["token_cos"].__setitem__(0, None),
                                       r["cases"][0]["token_rel"].__setitem__(0, None)))
    expect("html with null numbers", run(exe, "html", nulls, "--out", f"{work}/nulls.html"), 0, [])
    expect("merge with null numbers", run(exe, "merge", nulls, "--out", f"{work}/nulls-merged.json"), 0, [])
    if os.path.exists(f"{work}/nulls-merged.json"):
        merged = json.load(open(f"{work}/nulls-merged.json"))["cases"][0]
        if merged["metrics"]["max_rel"] is not None or merged["token_cos"][0] is not None:
            failures.append(f"merge changed null numbers: {merged['metrics']}, {merged['token_cos'][:2]}")

    # Suites.
    for kind, (path, needle) in suite_specials.items():
        for name, cmd in [("run --suite", [exe, "run", "--suite", path, "--report-dir", f"{work}/never"]),
                          ("list --suite", [exe, "list", "--suite", path]),
                          ("gate --policy", [exe, "gate", "--policy", path, good]),
                          ("merge --expect-suite", [exe, "merge", good, "--expect-suite", path, "--out", f"{work}/m.json"])]:
            expect(f"{name} {kind}", run(*cmd), 2, [path, needle])
        # judge's --output (safetensors).
        if kind != "over_limit":  # safetensors files have no size limit: a large one is read by its header
            expect(f"judge --output {kind}",
                   run(exe, "judge", case_id, "--output", path, "--report-dir", f"{work}/never"), 2, [path, needle])
    for out in ("never", "m.json"):
        if os.path.exists(f"{work}/{out}"):
            failures.append(f"a refused command wrote {out}")

    # Output paths, checked before any work.
    with open(f"{work}/plain", "w") as f:
        f.write("x")
    under_file = f"{work}/plain/out"
    quick_run = [exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", "*T1/*"]
    for name, cmd, needles in [
            ("run --junit under a file", quick_run + ["--report-dir", f"{work}/r1", "--junit", under_file + ".xml"],
             ["--junit", "not a directory"]),
            ("run --junit a directory", quick_run + ["--report-dir", f"{work}/r2", "--junit", f"{work}/adir"],
             ["--junit", "is a directory"]),
            ("run --json a directory", quick_run + ["--report-dir", f"{work}/r3", "--json", f"{work}/adir"],
             ["--json", "is a directory"]),
            ("run --report-dir a file", quick_run + ["--report-dir", f"{work}/plain"], ["--report-dir", "not a directory"]),
            # A special file must never be replaced by the rename (run as root, a writer that renamed onto /dev/null
            # would replace the device with a regular file); a FIFO of the work directory stands for one here.
            ("run --json a FIFO", quick_run + ["--report-dir", f"{work}/r4", "--json", f"{work}/fifo"],
             ["--json", "is a FIFO"]),
            ("export --out a file", [exe, "export", case_id, "--out", f"{work}/plain"], ["--out", "not a directory"]),
            ("html --out a directory", [exe, "html", good, "--out", f"{work}/adir"], ["--out", "is a directory"]),
            ("compare --json a directory", [exe, "compare", good, good, "--json", f"{work}/adir"], ["--json", "is a directory"]),
            ("compare --markdown under a file", [exe, "compare", good, good, "--markdown", under_file + ".md"],
             ["--markdown", "not a directory"]),
            ("calibrate --json a directory", [exe, "calibrate", "--suite", "smoke", "--filter", case_id, "--seeds", "1",
                                              "--json", f"{work}/adir"], ["--json", "is a directory"]),
            ("selftest --json under a file", [exe, "selftest", "--seeds", "1", "--json", under_file + ".json"],
             ["--json", "not a directory"])]:
        expect(name, run(*cmd), 2, needles)
    for d in ("r1", "r2", "r3", "r4"):
        if os.path.exists(f"{work}/{d}"):
            failures.append(f"a refused run left its report directory {d}")
    if os.listdir(f"{work}/adir"):
        failures.append(f"a refused command wrote into {work}/adir: {os.listdir(work + '/adir')}")

    # Usage: a first word that is no subcommand names the closest one; a suite name with no file lists the suites
    # there are (those of cases/, the folder this build resolves names in); usage lines name the command, not a path.
    expect("a misspelt subcommand", run(exe, "runn"), 2, ["unknown subcommand 'runn': did you mean 'run'?"])
    expect("a word that is no subcommand", run(exe, "zzqqxx"), 2, ["unknown subcommand 'zzqqxx' ("])
    suites = sorted(f[:-5] for f in os.listdir(os.path.join(os.path.dirname(__file__), "..", "..", "cases"))
                    if f.endswith(".yaml"))
    expect("run --suite nosuch", run(exe, "run", "--suite", "nosuch", "--kernel", "host"), 2,
           ["no suite named 'nosuch'", "name one of " + ", ".join(suites) + ", or give the path of a suite file"])
    r = run(exe, "run", "--help")
    if r is None or r.returncode != 0 or "Usage: moe-harness run" not in r.stdout:
        failures.append(f"run --help: the usage line does not name `moe-harness run`: {r and r.stdout[:200]}")

    if failures:
        print("\n".join(["FAILED:"] + failures))
        return 1
    print("every bad input and output path refused with exit 2, naming the file and key")
    return 0


if __name__ == "__main__":
    sys.exit(main())
