#!/usr/bin/env python3
"""The exported fixture and references are byte-identical with OMP_NUM_THREADS=1 and =2 (thread count free).

Usage: check_thread_independence.py MOE_HARNESS OUT_DIR
"""
import filecmp
import os
import shutil
import subprocess
import sys


def main():
    exe, out = sys.argv[1], sys.argv[2]
    shutil.rmtree(out, ignore_errors=True)
    ids = subprocess.run([exe, "list", "--suite", "smoke", "--filter", "*fp8blk*T33*"], capture_output=True, text=True,
                         check=True).stdout.split()
    assert len(ids) == 1, ids
    for n in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=n)
        subprocess.run([exe, "export", ids[0], "--out", f"{out}/t{n}"], env=env, check=True, capture_output=True)
    for f in ("fixture.safetensors", "reference.safetensors", "case.json"):
        assert filecmp.cmp(f"{out}/t1/{f}", f"{out}/t2/{f}", shallow=False), f"{f} differs between 1 and 2 threads"
    print("identical bytes for 1 and 2 threads:", ids[0])


if __name__ == "__main__":
    main()
