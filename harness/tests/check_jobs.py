#!/usr/bin/env python3
"""Parallel workers (`run --jobs N`): the same verdicts as one worker, and fault containment unchanged.

- The smoke suite and a subset of the nightly on the host kernel, with --jobs 1 and --jobs 2: `moe-harness compare`
  finds no drift (exit 0), and every record is equal field by field but the timing (timing, metrics kernel_us,
  achieved_tbps, achieved_tflops), in the same order (the suite's), in report.json and junit.xml; the journal holds
  one record per test; two worker processes were seen at once.
- With --jobs 2, a plugin that segfaults on one case of fault_containment.yaml, and one that loops there (stopped by
  --case-timeout), each cost exactly that case: one error record, the other four pass.
- selftest and calibrate on fault_containment.yaml's five cases: the same table (stdout but the elapsed time, and
  the --json file) with --jobs 1 and --jobs 2.
- A host memory budget ($MOE_HOST_MEMORY_BUDGET) of 9 GiB holds two cases' memory limits (4 GiB and more each):
  --jobs 4 is clamped to 2 workers, saying so, and never runs more than 2 at once.
- --jobs with --no-isolation, and --jobs 0, are bad usage (exit 2); --jobs auto runs.

Usage: check_jobs.py MOE_HARNESS PLUGIN_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
FAULT_SUITE = os.path.join(HERE, "fault_containment.yaml")
TIMING = ("kernel_us", "achieved_tbps", "achieved_tflops")
# One nightly case of each kind the host kernel judges quickly: bf16 decode and prefill, fp8 per-tensor, channel and
# block, MXFP8, MXFP4, a TP shard, an EP shard, shared experts (the filter's globs on the nightly's ids).
NIGHTLY_FILTERS = ["*bf16*/T1/*", "*fp8_e4m3fn_tensor*/T4/*", "*block*/T1/*", "*mxfp4*/T1/*", "*mxfp8*/T2/*",
                   "*/tp2*/T3/*", "*ep2*/T1/*", "*shared*/T1/*"]


def children(pid):
    try:
        return [int(p) for p in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except FileNotFoundError:
        return []


def run(exe, args, rep, watch=False):
    """Runs `exe run ARGS --report-dir rep`; returns (exit status, the most worker processes seen at once)."""
    p = subprocess.Popen([exe, "run", *args, "--report-dir", rep], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    most = 0
    while watch and p.poll() is None:
        most = max(most, len(children(p.pid)))
        time.sleep(0.05)
    out, err = p.communicate(timeout=1800)
    return p.returncode, most, out, err


def records(rep):
    report = json.load(open(f"{rep}/report.json"))
    out = []
    for c in report["cases"]:
        c = dict(c)
        c.pop("timing")
        c["metrics"] = {k: v for k, v in c["metrics"].items() if k not in TIMING}
        out.append(c)
    return out


def junit_names(rep):
    return [(t.get("classname"), t.get("name")) for t in ET.parse(f"{rep}/junit.xml").getroot().findall(".//testcase")]


def same_verdicts(exe, work, name, args):
    one, two = f"{work}/{name}-jobs1", f"{work}/{name}-jobs2"
    t0 = time.time()
    rc1, _, _, err1 = run(exe, [*args, "--jobs", "1"], one)
    t1 = time.time()
    rc2, most, _, err2 = run(exe, [*args, "--jobs", "2"], two, watch=True)
    t2 = time.time()
    assert rc1 == 0 and rc2 == 0, (rc1, rc2, err1[-2000:], err2[-2000:])
    assert most == 2, f"--jobs 2 ran {most} worker process(es) at once"
    a, b = records(one), records(two)
    assert len(a) == len(b) > 0, (len(a), len(b))
    for x, y in zip(a, b):
        assert x == y, (x["kernel"], x["id"], {k: (x[k], y.get(k)) for k in x if x[k] != y.get(k)})
    assert junit_names(one) == junit_names(two)
    journal = [json.loads(l) for l in open(f"{two}/journal.jsonl")]
    assert sum(l["type"] == "record" for l in journal) == len(b)
    assert sorted(l["slot"] for l in journal if l["type"] == "record") == list(range(len(b)))
    r = subprocess.run([exe, "compare", f"{one}/report.json", f"{two}/report.json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:]
    print(f"{name}: {len(a)} records equal with --jobs 1 ({t1 - t0:.1f} s) and --jobs 2 ({t2 - t1:.1f} s); "
          "compare: no drift")


def main():
    exe, plugins, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    same_verdicts(exe, work, "smoke", ["--suite", "smoke", "--kernel", "host", "--no-timing"])
    filters = [a for f in NIGHTLY_FILTERS for a in ("--filter", f)]
    same_verdicts(exe, work, "nightly-subset", ["--suite", "nightly", "--kernel", "host", "--no-timing", *filters])

    for kind, check, extra in (("segfault", "crash", []), ("loop", "timeout", ["--case-timeout", "5"])):
        rep = f"{work}/{kind}-jobs2"
        rc, _, _, err = run(exe, ["--suite", FAULT_SUITE, "--plugin", f"{plugins}/libmoe_faulty_plugin_{kind}.so",
                                  "--jobs", "2", *extra], rep)
        assert rc == 3, (kind, rc, err[-3000:])
        report = json.load(open(f"{rep}/report.json"))
        statuses = [(c["id"], c["status"], c["failed_check"]) for c in report["cases"]]
        assert len(statuses) == 5 and not report["provenance"]["incomplete"], statuses
        for cid, status, failed in statuses:
            if "/T3/" in cid:
                assert (status, failed) == ("error", check), (kind, cid, status, failed)
            else:
                assert status == "pass", (kind, cid, status, failed)
        print(f"{kind} with --jobs 2: one {check} case, 4 passed")

    for cmd in (["selftest", "--suite", FAULT_SUITE, "--seeds", "2"], ["calibrate", "--suite", FAULT_SUITE, "--seeds", "2"]):
        out = {}
        for j in ("1", "2"):
            js = f"{work}/{cmd[0]}-jobs{j}.json"
            r = subprocess.run([exe, *cmd, "--jobs", j, "--json", js], capture_output=True, text=True, timeout=600)
            assert r.returncode in (0, 1), (cmd, j, r.returncode, r.stderr[-2000:])
            table = re.sub(r", [0-9.]+ s\)", ")", r.stdout)  # selftest's last line gives its elapsed time
            out[j] = (r.returncode, table, json.load(open(js)))
        assert out["1"] == out["2"], (cmd[0], out["1"][1][-1500:], out["2"][1][-1500:])
        print(f"{cmd[0]}: the same table and JSON with --jobs 1 and --jobs 2")

    env = dict(os.environ, MOE_HOST_MEMORY_BUDGET=str(9 << 30))
    p = subprocess.Popen([exe, "run", "--suite", "smoke", "--kernel", "host", "--no-timing", "--jobs", "4",
                          "--report-dir", f"{work}/clamped"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    most = 0
    while p.poll() is None:
        most = max(most, len(children(p.pid)))
        time.sleep(0.05)
    _, err = p.communicate()
    assert p.returncode == 0, err[-2000:]
    assert "--jobs 4: the host memory budget (9.0 GiB, MOE_HOST_MEMORY_BUDGET) holds the memory limits of 2 workers" \
        in err, err[-2000:]
    assert 1 <= most <= 2, most
    print(f"--jobs 4 under a 9 GiB budget: clamped to 2 workers ({most} seen at once)")

    for bad in (["--jobs", "2", "--no-isolation"], ["--jobs", "0"], ["--jobs", "two"], ["--job-threads", "0"]):
        r = subprocess.run([exe, "run", "--suite", "smoke", "--kernel", "host", *bad, "--report-dir", f"{work}/bad"],
                           capture_output=True, text=True)
        assert r.returncode == 2, (bad, r.returncode, r.stderr[-1000:])
    rc, _, _, err = run(exe, ["--suite", "smoke", "--kernel", "host", "--no-timing", "--filter", "*/T1/*", "--jobs",
                              "auto"], f"{work}/auto")
    assert rc == 0, err[-2000:]
    print("--jobs with --no-isolation, --jobs 0, --jobs two, --job-threads 0: exit 2; --jobs auto runs")


if __name__ == "__main__":
    main()
