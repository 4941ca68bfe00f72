#!/usr/bin/env python3
"""Every numeric option of every subcommand is validated: NaN, infinite, negative where a count or margin must be
positive, out of range, a seed that would wrap (-1) or clamp (2^64), a non-decimal integer, a time limit that is not
a positive finite number of seconds up to 10^6: exit 2 naming the option
(harness/cli/number_checks.hpp). Valid values still work, and a seed is read as decimal (010 is ten, not eight).

Usage: check_cli_numbers.py MOE_HARNESS WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys


def run(args, timeout=60):
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def main():
    exe, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    first = run([exe, "list", "--suite", "smoke"])[1].split("\n")[0]
    one = [exe, "run", "--suite", "smoke", "--filter", first, "--kernel", "host", "--no-timing"]
    rc, out, err = run(one + ["--report-dir", f"{work}/base"])
    assert rc == 0, f"baseline run: exit {rc}\n{out[-2000:]}\n{err[-2000:]}"
    report = f"{work}/base/report.json"
    nothing = [exe, "run", "--suite", "smoke", "--filter", "no-such-case", "--kernel", "host"]
    quick = [exe, "calibrate", "--suite", "smoke", "--filter", "no-such-case", "--kernel", "host"]
    refused = [
        ([exe, "compare", report, report, "--cos-drop", "nan"], "--cos-drop"),
        ([exe, "compare", report, report, "--cos-drop", "inf"], "--cos-drop"),
        ([exe, "compare", report, report, "--cos-drop", "-0.1"], "--cos-drop"),
        ([exe, "compare", report, report, "--rel-factor", "NaN"], "--rel-factor"),
        ([exe, "compare", report, report, "--rel-factor", "0.5"], "--rel-factor"),  # flags unchanged runs
        ([exe, "compare", report, report, "--rel-floor", "-inf"], "--rel-floor"),
        ([exe, "compare", report, report, "--rel-floor", "nan"], "--rel-floor"),
        ([exe, "html", report, "--out", f"{work}/r.html", "--cos-drop", "nan"], "--cos-drop"),
        ([exe, "html", report, "--out", f"{work}/r.html", "--rel-factor", "inf"], "--rel-factor"),
        (nothing + ["--seed", "-1"], "--seed"),
        (nothing + ["--seed", "18446744073709551616"], "--seed"),
        (nothing + ["--seed", "0x10"], "--seed"),
        (nothing + ["--seed", "1.5"], "--seed"),
        (nothing + ["--seed", "+1"], "--seed"),  # one spelling per seed: digits only
        ([exe, "selftest", "--seeds", "+2"], "--seeds"),
        (nothing + ["--host-budget", "nan"], "--host-budget"),
        (nothing + ["--host-budget", "0"], "--host-budget"),
        (nothing + ["--host-budget", "-4e9"], "--host-budget"),
        ([exe, "selftest", "--seeds", "0"], "--seeds"),
        ([exe, "selftest", "--seeds", "-1"], "--seeds"),
        ([exe, "selftest", "--seeds", "0x14"], "--seeds"),
        (quick + ["--seeds", "-3"], "--seeds"),
        (quick + ["--seeds", "0"], "--seeds"),
        (quick + ["--seeds", "99999999999999999999"], "--seeds"),
        # The watchdog's time limit: a positive finite number of seconds, at most 10^6 (a NaN deadline never fires).
        (nothing + ["--case-timeout", "nan"], "--case-timeout"),
        (nothing + ["--case-timeout", "inf"], "--case-timeout"),
        (nothing + ["--case-timeout", "0"], "--case-timeout"),
        (nothing + ["--case-timeout", "-5"], "--case-timeout"),
        (nothing + ["--case-timeout", "1e7"], "--case-timeout"),
        (quick + ["--case-timeout", "nan"], "--case-timeout"),
        # One strict parser (fixtures/strict_number.hpp): no '+', space or hex float (issue 48).
        ([exe, "compare", report, report, "--cos-drop", "+0.1"], "--cos-drop"),
        ([exe, "compare", report, report, "--rel-floor", "0x1p4"], "--rel-floor"),
        (nothing + ["--case-timeout", " 5"], "--case-timeout"),
        (nothing + ["--host-budget", "+4e9"], "--host-budget"),
        ([exe, "selftest", "--case-timeout", "inf"], "--case-timeout"),
    ]
    bad = 0
    for args, needle in refused:
        rc, out, err = run(args, timeout=30)
        ok = rc == 2 and needle in err
        bad += not ok
        shown = " ".join(a if not a.startswith(work) else "..." for a in args[1:])
        print(f"{'ok' if ok else 'FAIL'}: {shown}: exit {rc}: {err.strip()[:200]}")
    # Accepted: valid margins, the whole seed range, decimal seeds.
    rc, out, err = run([exe, "compare", report, report, "--cos-drop", "1e-4", "--rel-factor", "2", "--rel-floor", "0"])
    if rc != 0:
        bad += 1
        print(f"FAIL: valid compare margins: exit {rc}: {err.strip()[:300]}")
    rc, out, err = run(one + ["--case-timeout", "600", "--report-dir", f"{work}/timeout-600"])
    if rc != 0:
        bad += 1
        print(f"FAIL: --case-timeout 600: exit {rc}: {err.strip()[:300]}")
    for text, want in (("010", "10"), ("18446744073709551615", "18446744073709551615")):
        rc, out, err = run(one + ["--seed", text, "--report-dir", f"{work}/seed-{want}"])
        seed = json.load(open(f"{work}/seed-{want}/report.json"))["provenance"]["seed"] if rc == 0 else None
        if rc != 0 or str(seed) != want:
            bad += 1
            print(f"FAIL: --seed {text}: exit {rc}, report seed {seed!r} (want {want}): {err.strip()[:300]}")
        else:
            print(f"ok: --seed {text} runs with seed {seed}")
    print(f"{bad} check(s) failed" if bad else "all checks passed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
