#!/usr/bin/env python3
"""Where a process's fixed cost goes on the Python path against `moe-harness run`, on the same cases and the same
native kernel: python_overhead.py's "process" figure spreads a process's one-time costs over its cases, so on a
suite of small cases they decide it. Prints, for one Python process (as python_overhead.py's driver does it, with
timestamps between its steps) and one `run --no-isolation --no-timing` process (its report's phases against its
wall time), what is spent outside the cases and outside the kernel.

Usage: PYTHONPATH=build/<preset>/python fixed_costs.py MOE_HARNESS --suite S --kernel K [--repeats N]
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time

DRIVER = r"""
import json, sys, time
t = {"start": time.monotonic()}
import moe_harness
t["import"] = time.monotonic()
suite_name, kernel_id, out_dir = sys.argv[1:4]
kernel = moe_harness.native_kernel(kernel_id)
t["kernel"] = time.monotonic()
cases = list(moe_harness.suite(suite_name))
t["suite"] = time.monotonic()
in_cases = 0.0
session = moe_harness.Session(out_dir, kernel.id, kernel.version)
for case in cases:
    a = time.monotonic()
    session.run(case, kernel)
    in_cases += time.monotonic() - a
t["cases"] = time.monotonic()
session.write()
t["write"] = time.monotonic()
print(json.dumps({"t": t, "in_cases": in_cases, "kernel_s": kernel.seconds, "prepare_s": kernel.prepare_seconds,
                  "n": len(cases)}))
"""


def python_once(suite, kernel):
    with tempfile.TemporaryDirectory() as d:
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-c", DRIVER, suite, kernel, d], check=True, capture_output=True, text=True)
        wall = time.monotonic() - t0
    j = json.loads(r.stdout.strip().splitlines()[-1])
    t = j["t"]
    return {"wall": wall, "import": t["import"] - t["start"],
            "native_kernel()": t["kernel"] - t["import"], "suite()": t["suite"] - t["kernel"],
            "cases (kernel out)": j["in_cases"] - j["kernel_s"], "kernel": j["kernel_s"],
            "write": t["write"] - t["cases"], "outside the steps": wall - (t["write"] - t["start"])}


def native_once(exe, suite, kernel):
    with tempfile.TemporaryDirectory() as d:
        t0 = time.monotonic()
        subprocess.run([exe, "run", "--suite", suite, "--kernel", kernel, "--no-isolation", "--no-timing",
                        "--report-dir", d], check=False, capture_output=True)
        wall = time.monotonic() - t0
        cases = json.load(open(f"{d}/report.json"))["cases"]
    phases = {}
    for c in cases:
        for k, v in c["timing"]["phases_s"].items():
            phases[k] = phases.get(k, 0.0) + v
    inside = sum(phases.values())
    return {"wall": wall, "cases (kernel out)": inside - phases.get("kernel", 0.0), "kernel": phases.get("kernel", 0.0),
            "outside the cases": wall - inside, **{f"  phase {k}": v for k, v in sorted(phases.items())}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("moe_harness")
    ap.add_argument("--suite", default="smoke")
    ap.add_argument("--kernel", default="gpu")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare = time.monotonic() - t0
    rows = [(native_once(a.moe_harness, a.suite, a.kernel), python_once(a.suite, a.kernel)) for _ in range(a.repeats)]
    print(f"bare interpreter start and exit: {1e3 * bare:.1f} ms")
    for i, (n, p) in enumerate(rows):
        print(f"repeat {i}: run (ms): " + ", ".join(f"{k} {1e3 * v:.1f}" for k, v in n.items()))
        print(f"repeat {i}: python (ms): " + ", ".join(f"{k} {1e3 * v:.1f}" for k, v in p.items()))


if __name__ == "__main__":
    main()
