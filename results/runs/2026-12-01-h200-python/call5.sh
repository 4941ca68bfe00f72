#!/usr/bin/env bash
# Fifth device call: the GPU kernels' calibration over 20 seeds of the nightly's decode cases, then triton_diag.py.
O=${OUT:-/tmp/out}
t0=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package; } > $O/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" >> $O/times.txt; t1=$SECONDS
B=build/cuda/harness/moe-harness
timeout 250 $B calibrate --suite nightly --filter '*decode*' --kernel gpu --seeds 20 --jobs 4 --json $O/cal-decode.json > $O/cal-decode.md 2>&1
echo "calibrate rc=$? $((SECONDS-t1)) s" >> $O/times.txt
python3 ci/summarize/systematic_margins.py $O/cal-decode.json >> $O/cal-decode.md 2>&1
PYTHONPATH=build/cuda/python:kernels/external timeout 80 python3 results/runs/2026-12-01-h200-python/triton_diag.py 55 > $O/triton.txt 2>&1
echo "triton rc=$?" >> $O/times.txt
