#!/usr/bin/env python3
"""What the Python path costs per case beyond the kernel: the same cases and the same native kernel judged by
`moe-harness run --no-isolation` and by the Python module (case.run(moe_harness.native_kernel(K)) in a fresh
interpreter, the verdicts collected by a Session that writes the same four report files), alternating the two so
that both see the same machine load.

For each path and repeat, with the kernel's own time taken out (the report's kernel phase for `run`; the time
inside the native kernel's run(), NativeKernel.seconds, for Python, so the Python callback counts as overhead; the
kernel's prepare() stays in both, as in the pipeline's clone_prepare phase):
  process   (wall time of the whole process - kernel time) / cases: start, suite load, every case, the reports
  pipeline  median over cases of (the record's phases summed - kernel time): the case itself, in the loop
The ratio python / native of each is the overhead factor (issue 22's target: at most 1.2).

Usage: python_overhead.py MOE_HARNESS [--suite S] [--filter GLOB]... [--kernel host|gpu] [--repeats N] [--json FILE]
Needs PYTHONPATH to reach the module (build/<preset>/python). Prints the machine and the table.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

DRIVER = r"""
import json, sys, time
import moe_harness
suite, filters, kernel_id, out_dir, result = sys.argv[1:6]
t0 = time.monotonic()
kernel = moe_harness.native_kernel(kernel_id)
cases = []
with moe_harness.Session(out_dir, kernel.id, kernel.version) as session:
    for case in moe_harness.suite(suite, filter=json.loads(filters) or None):
        before = kernel.seconds
        v = session.run(case, kernel)
        cases.append({"id": case.id, "status": v.status, "phases": sum(v.timing.values()),
                      "kernel": kernel.seconds - before})
json.dump({"wall": time.monotonic() - t0, "kernel": kernel.seconds, "cases": cases}, open(result, "w"))
"""


def native_run(exe, args, work):
    rep = tempfile.mkdtemp(dir=work)
    t0 = time.monotonic()
    r = subprocess.run([exe, "run", *args, "--no-isolation", "--no-timing", "--report-dir", rep],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if r.returncode not in (0, 4):
        sys.exit(f"moe-harness run: exit {r.returncode}\n{r.stderr[-2000:]}")
    cases = json.load(open(f"{rep}/report.json"))["cases"]
    kernel = sum(c["timing"]["phases_s"]["kernel"] for c in cases)
    pipeline = [sum(c["timing"]["phases_s"].values()) - c["timing"]["phases_s"]["kernel"] for c in cases
                if c["status"] != "skip"]
    return {"process": (wall - kernel) / len(cases), "pipeline": statistics.median(pipeline), "cases": len(cases),
            "statuses": sorted(c["status"] for c in cases)}


def python_run(suite, filters, kernel, work):
    out, result = tempfile.mkdtemp(dir=work), os.path.join(work, "python.json")
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", DRIVER, suite, json.dumps(filters), kernel, out, result], check=True)
    wall = time.monotonic() - t0
    r = json.load(open(result))
    cases = r["cases"]
    pipeline = [c["phases"] - c["kernel"] for c in cases if c["status"] != "skip"]
    return {"process": (wall - r["kernel"]) / len(cases), "pipeline": statistics.median(pipeline), "cases": len(cases),
            "statuses": sorted(c["status"] for c in cases)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("moe_harness")
    ap.add_argument("--suite", default="smoke")
    ap.add_argument("--filter", action="append", default=[])
    ap.add_argument("--kernel", default="host")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    args = ["--suite", a.suite, "--kernel", a.kernel] + [x for f in a.filter for x in ("--filter", f)]
    rows = {"native": [], "python": []}
    with tempfile.TemporaryDirectory() as work:
        for _ in range(a.repeats):
            rows["native"].append(native_run(a.moe_harness, args, work))
            rows["python"].append(python_run(a.suite, a.filter, a.kernel, work))
    if rows["native"][0]["statuses"] != rows["python"][0]["statuses"]:
        sys.exit(f"the two paths disagree on the verdicts: {rows['native'][0]['statuses']} vs {rows['python'][0]['statuses']}")
    med = {p: {k: statistics.median(r[k] for r in rs) for k in ("process", "pipeline")} for p, rs in rows.items()}
    # The fastest repeat of each path too: on a shared or virtual machine a repeat is slowed by what it does not
    # control (other load, the host backing fresh memory), never sped up, so the minimum is the least disturbed.
    low = {p: {k: min(r[k] for r in rs) for k in ("process", "pipeline")} for p, rs in rows.items()}
    print(f"machine: {platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; suite {a.suite} {a.filter or ''}, "
          f"kernel {a.kernel}, {rows['native'][0]['cases']} cases, {a.repeats} repeats")
    print(f"{'per case, kernel excluded':28} {'run (ms)':>10} {'python (ms)':>12} {'python/run':>11}")
    for label, stat in (("median", med), ("fastest", low)):
        for k in ("process", "pipeline"):
            print(f"{k + ', ' + label:28} {1e3 * stat['native'][k]:10.2f} {1e3 * stat['python'][k]:12.2f} "
                  f"{stat['python'][k] / stat['native'][k]:11.3f}")
    if a.json:
        json.dump({"medians": med, "fastest": low, "runs": rows}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
