#!/usr/bin/env python3
"""What the batch file path costs beyond the kernel: the same cases judged by `moe-harness run --no-isolation
--no-timing --kernel K` (native) and by `moe-harness export --suite` + an external program's outputs + `moe-harness
judge --dir` (batch), the order turning each repeat so that all see the same machine load.

The external program here is the cheapest one possible: each case's output is its exported contract reference
rounded to the output dtype (NumPy), written as out.safetensors with the fixture fingerprint; its time is left out,
as the kernel's own time is left out of the native path. Per case:
  native       (wall of `run` - the report's kernel phase) / cases: suite load, generation, references, the probes
               (which run the kernel again: on the host kernel that is kernel time counted as overhead), reports
  native-core  the same without the probes phase: the stricter baseline (the batch path has no probes)
  batch        (wall of `export --suite` + wall of `judge --dir`) / cases
  recompute    the same with `judge --dir --recompute` (every reference computed again)
The ratios batch / native and batch / native-core are the overhead factor (issue 22's target: at most 2).

Usage: batch_judge_overhead.py MOE_HARNESS [--suite S] [--filter GLOB]... [--kernel host|gpu] [--repeats N] [--json FILE]
Prints the machine and the table.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "external"))
import numpy_runner  # noqa: E402  (the safetensors reader/writer of the example runner)


def fingerprint(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))["__metadata__"]["moe.fixture_fingerprint"]


def write_outputs(ex):
    """Each case's contract reference rounded to its output dtype: a correct external kernel, at no cost to speak of."""
    for c in json.load(open(f"{ex}/index.json"))["cases"]:
        if not c["exported"]:
            continue
        d = f"{ex}/{c['dir']}"
        out_dtype = json.load(open(f"{d}/case.json"))["dtypes"]["output"]
        ref = numpy_runner.read_safetensors(f"{d}/reference.safetensors")[0]["out_contract"][1]
        if out_dtype == "bf16":
            t = ("BF16", numpy_runner.f32_to_bf16(ref))
        elif out_dtype == "f16":
            t = ("F16", ref.astype(np.float16))
        else:
            t = ("F32", ref.astype(np.float32))
        numpy_runner.write_safetensors(f"{d}/out.safetensors", {"out": t},
                                       {"moe.fixture_fingerprint": fingerprint(f"{d}/fixture.safetensors")})


def timed(cmd, ok=(0,)):
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if r.returncode not in ok:
        sys.exit(f"{' '.join(cmd[:3])}: exit {r.returncode}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
    return wall


def native_run(exe, args, work):
    rep = tempfile.mkdtemp(dir=work)
    wall = timed([exe, "run", *args, "--no-isolation", "--no-timing", "--report-dir", rep], ok=(0, 4))
    cases = json.load(open(f"{rep}/report.json"))["cases"]
    judged = [c for c in cases if c["status"] != "skip"]
    kernel = sum(c["timing"]["phases_s"]["kernel"] for c in cases)
    probes = sum(c["timing"]["phases_s"]["probes"] for c in cases)
    return {"native": (wall - kernel) / len(judged), "native-core": (wall - kernel - probes) / len(judged),
            "cases": len(judged), "statuses": sorted(c["status"] for c in judged)}


def batch_run(exe, suite_args, work, recompute):
    ex, rep = tempfile.mkdtemp(dir=work), tempfile.mkdtemp(dir=work)
    shutil.rmtree(ex)
    export = timed([exe, "export", *suite_args, "--out", ex])
    write_outputs(ex)  # the external kernel: not timed
    judge = timed([exe, "judge", "--dir", ex, "--report-dir", rep] + (["--recompute"] if recompute else []))
    cases = json.load(open(f"{rep}/report.json"))["cases"]
    shutil.rmtree(ex)
    return {"seconds": (export + judge) / len(cases), "export": export / len(cases), "judge": judge / len(cases),
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
    suite_args = ["--suite", a.suite] + [x for f in a.filter for x in ("--filter", f)]
    rows = {"native": [], "batch": [], "recompute": []}
    with tempfile.TemporaryDirectory() as work:
        for i in range(a.repeats):
            # The order turns each repeat, so that no path always follows another's disk writes.
            order = ["native", "batch", "recompute"][i % 3:] + ["native", "batch", "recompute"][:i % 3]
            for path in order:
                rows[path].append(native_run(a.moe_harness, suite_args + ["--kernel", a.kernel], work)
                                  if path == "native" else batch_run(a.moe_harness, suite_args, work, path == "recompute"))
    if any(s != "pass" for r in rows["batch"] + rows["recompute"] for s in r["statuses"]):
        sys.exit(f"the batch path did not pass every case: {rows['batch'][0]['statuses']}")
    med = lambda rs, k: statistics.median(r[k] for r in rs)  # noqa: E731
    native, core = med(rows["native"], "native"), med(rows["native"], "native-core")
    print(f"machine: {platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; suite {a.suite} {a.filter or ''}, "
          f"kernel {a.kernel}, {rows['native'][0]['cases']} judged cases native, {len(rows['batch'][0]['statuses'])} "
          f"batch, {a.repeats} repeats (medians)")
    print(f"{'per case, kernel excluded':28} {'ms':>10} {'/native':>9} {'/native-core':>13}")
    print(f"{'native (run)':28} {1e3 * native:10.2f}")
    print(f"{'native-core (no probes)':28} {1e3 * core:10.2f}")
    for name in ("batch", "recompute"):
        s = med(rows[name], "seconds")
        print(f"{name + ' (export + judge --dir)':28} {1e3 * s:10.2f} {s / native:9.3f} {s / core:13.3f}"
              f"   export {1e3 * med(rows[name], 'export'):.2f} + judge {1e3 * med(rows[name], 'judge'):.2f}")
    if a.json:
        json.dump({"runs": rows}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
