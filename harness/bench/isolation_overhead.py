#!/usr/bin/env python3
"""What isolation costs: the same cases judged in worker processes (the default) and in process (--no-isolation),
in one invocation, alternating the two modes so that both see the same machine load.

  1. the suite as asked (e.g. the nightly on the GPU kernel): the wall time of each whole run, each mode's median
     and the overhead relative to the in-process run;
  2. the cost per case without the work: the same suite on the host kernel with --host-budget 1, where every case
     is declined (a skip decided in the worker), so the difference per case is the round trip (request, record as
     JSON, the journal line) and the rest is the worker's start.

Usage: isolation_overhead.py MOE_HARNESS [--suite S] [--kernel K] [--filter GLOB]... [--repeats N] [--json FILE]
                             [-- RUN_ARGS...]
RUN_ARGS go to every `moe-harness run` of part 1 (e.g. --require-device). Prints the machine, thread count and both
tables; --json writes the numbers.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed_run(exe, args, isolated, work, ok):
    rep = tempfile.mkdtemp(dir=work)
    cmd = [exe, "run", *args, "--report-dir", rep] + ([] if isolated else ["--no-isolation"])
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if r.returncode not in ok:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr[-2000:]}")
    n = len(json.load(open(f"{rep}/report.json"))["cases"])
    shutil.rmtree(rep)
    return wall, n


def compare(exe, args, repeats, work, ok=(0, 1)):
    walls = {True: [], False: []}
    n = 0
    for i in range(repeats):
        for isolated in ((True, False) if i % 2 == 0 else (False, True)):
            w, n = timed_run(exe, args, isolated, work, ok)
            walls[isolated].append(w)
            print(f"  {'isolated  ' if isolated else 'in process'} run {i + 1}: {w:8.2f} s ({n} tests)", flush=True)
    iso, inp = statistics.median(walls[True]), statistics.median(walls[False])
    return {"tests": n, "isolated_s": walls[True], "in_process_s": walls[False], "median_isolated_s": iso,
            "median_in_process_s": inp, "overhead_s": iso - inp, "overhead_percent": 100.0 * (iso - inp) / inp,
            "overhead_per_test_ms": 1000.0 * (iso - inp) / max(n, 1)}


def main():
    argv = sys.argv[1:]
    run_args = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("--suite", default="smoke")
    ap.add_argument("--kernel", default="host")
    ap.add_argument("--filter", action="append", default=[])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    o = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="moe-isolation-bench-")
    sel = ["--suite", o.suite] + [a for f in o.filter for a in ("--filter", f)]
    threads = os.environ.get("OMP_NUM_THREADS", f"unset ({os.cpu_count()} CPUs)")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
    print(f"machine: {platform.node()}, {cpu}, {os.cpu_count()} CPUs, OMP_NUM_THREADS {threads}")
    print(f"1. suite {o.suite}, kernel {o.kernel}, {o.repeats} runs per mode:")
    work_runs = compare(o.exe, sel + ["--kernel", o.kernel, *run_args], o.repeats, work)
    print(f"2. the same cases declined (host kernel, --host-budget 1): the round trip alone, {o.repeats} runs per mode:")
    round_trip = compare(o.exe, sel + ["--kernel", "host", "--host-budget", "1"], o.repeats, work,
                         ok=(4,))  # every case declined: nothing checked
    shutil.rmtree(work)
    for name, r in (("suite", work_runs), ("declined", round_trip)):
        print(f"{name:>8}: {r['tests']} tests, median {r['median_isolated_s']:.2f} s isolated vs "
              f"{r['median_in_process_s']:.2f} s in process: {r['overhead_s']:+.2f} s ({r['overhead_percent']:+.1f}%, "
              f"{r['overhead_per_test_ms']:+.1f} ms per test)")
    if o.json:
        json.dump({"machine": platform.node(), "cpu": cpu, "cpus": os.cpu_count(), "omp_num_threads": threads,
                   "suite": o.suite, "kernel": o.kernel, "run_args": run_args, "suite_runs": work_runs,
                   "declined_runs": round_trip}, open(o.json, "w"), indent=1)


if __name__ == "__main__":
    main()
