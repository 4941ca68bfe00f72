#!/usr/bin/env python3
"""GoogleTest sharding through `moe-harness run`, then `moe-harness merge`: the merged report covers the suite once,
validates against the schema, and a duplicated or a missing shard is refused (exit 1, nothing written).

Usage: check_shard_merge.py MOE_HARNESS SCHEMA WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

import jsonschema


def main():
    exe, schema, work = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    for i in range(2):
        env = dict(os.environ, GTEST_TOTAL_SHARDS="2", GTEST_SHARD_INDEX=str(i))
        p = subprocess.run([exe, "run", "--suite", "smoke", "--kernel", "host", "--report-dir", f"{work}/s{i}"],
                           env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stdout[-1500:] + p.stderr[-1500:]
    a, b = (json.load(open(f"{work}/s{i}/report.json"))["summary"]["total"] for i in range(2))
    assert a > 0 and b > 0, (a, b)
    n_cases = len(subprocess.run([exe, "list", "--suite", "smoke"], capture_output=True, text=True).stdout.split())
    base = [exe, "merge", "--expect-suite", "smoke", "--kernel", "host-contract"]
    ok = subprocess.run(base + [f"{work}/s0/report.json", f"{work}/s1/report.json", "--out", f"{work}/merged.json"],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    merged = json.load(open(f"{work}/merged.json"))
    jsonschema.validate(merged, json.load(open(schema)))
    assert merged["summary"]["total"] == a + b == n_cases, (merged["summary"], a, b, n_cases)
    dup = subprocess.run(base + [f"{work}/s0/report.json", f"{work}/s0/report.json", f"{work}/s1/report.json",
                                 "--out", f"{work}/dup.json"], capture_output=True, text=True)
    assert dup.returncode == 1 and "DUPLICATE" in dup.stdout and not os.path.exists(f"{work}/dup.json"), dup.stdout
    miss = subprocess.run(base + [f"{work}/s0/report.json", "--out", f"{work}/miss.json"], capture_output=True, text=True)
    assert miss.returncode == 1 and "MISSING" in miss.stdout and not os.path.exists(f"{work}/miss.json"), miss.stdout
    # The short kernel names of `run` name the same kernels here; without --kernel the expected set is every kernel
    # the shards name, so a missing shard is still found.
    def merge(*args):
        return subprocess.run([exe, "merge", *args], capture_output=True, text=True)
    short = merge("--expect-suite", "smoke", "--kernel", "host", f"{work}/s0/report.json", f"{work}/s1/report.json",
                  "--out", f"{work}/short.json")
    assert short.returncode == 0 and json.load(open(f"{work}/short.json"))["summary"]["total"] == n_cases, short.stdout
    miss = merge("--expect-suite", "smoke", f"{work}/s0/report.json", "--out", f"{work}/miss2.json")
    assert miss.returncode == 1 and f"MISSING host-contract" in miss.stdout and not os.path.exists(f"{work}/miss2.json"), miss.stdout
    # Usage errors (exit 2, nothing written): an unknown kernel name; --kernel or --filter without --expect-suite
    # (they would be ignored and nothing checked); an --out that is a directory.
    for name, args, needle in [
            ("unknown_kernel", ["--expect-suite", "smoke", "--kernel", "hots"], "unknown kernel 'hots'"),
            ("kernel_without_suite", ["--kernel", "host"], "--expect-suite"),
            ("filter_without_suite", ["--filter", "*T1*"], "--expect-suite")]:
        r = merge(*args, f"{work}/s0/report.json", f"{work}/s1/report.json", "--out", f"{work}/{name}.json")
        assert r.returncode == 2 and needle in r.stderr and not os.path.exists(f"{work}/{name}.json"), (name, r.returncode, r.stderr)
    os.makedirs(f"{work}/outdir", exist_ok=True)
    r = merge(f"{work}/s0/report.json", f"{work}/s1/report.json", "--out", f"{work}/outdir")
    assert r.returncode == 2 and "--out" in r.stderr and "is a directory" in r.stderr, (r.returncode, r.stderr)
    print(f"shards {a} + {b} = {n_cases} cases merged; duplicate and missing shards refused; short names and usage errors")


if __name__ == "__main__":
    main()
