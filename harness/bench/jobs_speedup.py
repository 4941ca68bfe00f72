#!/usr/bin/env python3
"""What parallel workers (`run --jobs N`) buy: one suite run with each --jobs value back to back in one call, each
timed (wall, and the CPU seconds of the run's process tree), then `moe-harness compare` of each report against the
first and a field-by-field check of every record but the timing (timing, metrics kernel_us, achieved_tbps,
achieved_tflops). Prints a markdown table: wall, CPU, ratio to the first, time by phase summed over the cases, and
the expert weights generated (the run's cache line, with --reference-cache only, so summed generate time stands in).

Usage: jobs_speedup.py MOE_HARNESS OUT_DIR [--jobs 1 2 ...] [--repeats R] [-- RUN_ARGS...]
  RUN_ARGS default: --suite nightly --kernel host --no-timing
  --repeats R alternates the --jobs values R times (1 2 1 2 ...) and gives each value's median wall time.
Exit 0 when every run exited 0 and every report equals the first's; 1 otherwise.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

TIMING = ("kernel_us", "achieved_tbps", "achieved_tflops")


def records(path):
    out = []
    for c in json.load(open(path))["cases"]:
        c = dict(c)
        c.pop("timing")
        c["metrics"] = {k: v for k, v in c["metrics"].items() if k not in TIMING}
        out.append(c)
    return out


def phases(path):
    tot = {}
    for c in json.load(open(path))["cases"]:
        for k, v in c["timing"]["phases_s"].items():
            tot[k] = tot.get(k, 0.0) + v
    return tot


def main():
    argv = sys.argv[1:]
    run_args = ["--suite", "nightly", "--kernel", "host", "--no-timing"]
    if "--" in argv:
        run_args = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("out")
    ap.add_argument("--jobs", nargs="+", default=["1", "2"])
    ap.add_argument("--repeats", type=int, default=1)
    a = ap.parse_args(argv)
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; OMP_NUM_THREADS "
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}; run args: {' '.join(run_args)}")
    walls, cpus, reports, ok = {j: [] for j in a.jobs}, {j: [] for j in a.jobs}, {}, True
    for rep in range(a.repeats):
        for j in a.jobs:
            d = f"{a.out}/jobs{j}-{rep + 1}"
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.time()
            r = subprocess.run([a.exe, "run", *run_args, "--jobs", j, "--report-dir", d], capture_output=True, text=True)
            wall = time.time() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            last = (r.stdout.strip().splitlines() or [""])[-1]
            print(f"--jobs {j} run {rep + 1}: exit {r.returncode}, {wall:.1f} s wall, {cpu:.1f} s CPU, "
                  f"load {os.getloadavg()[0]:.1f}: {last}")
            ok &= r.returncode == 0
            walls[j].append(wall)
            cpus[j].append(cpu)
            reports.setdefault(j, f"{d}/report.json")
    base = a.jobs[0]
    for j in a.jobs[1:]:
        c = subprocess.run([a.exe, "compare", reports[base], reports[j]], capture_output=True, text=True)
        same = records(reports[base]) == records(reports[j])
        print(f"compare --jobs {base} vs --jobs {j}: exit {c.returncode} "
              f"({'no drift' if c.returncode == 0 else 'DRIFT'}); records field by field: "
              f"{'equal' if same else 'DIFFERENT'}")
        ok &= c.returncode == 0 and same
    names = list(phases(reports[base]))
    print()
    print("| --jobs | wall (median) | CPU (median) | first/this | " + " | ".join(names) + " |")
    print("|---" * (4 + len(names)) + "|")
    b = statistics.median(walls[base])
    for j in a.jobs:
        w, cp, ph = statistics.median(walls[j]), statistics.median(cpus[j]), phases(reports[j])
        print(f"| {j} | {w:.1f} s | {cp:.1f} s | {b / w:.2f}x | " + " | ".join(f"{ph.get(n, 0):.1f}" for n in names)
              + " |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
