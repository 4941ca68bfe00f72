#!/usr/bin/env bash
# Fourth device call (same machine session, the build of call 3): the GPU kernels' calibration over 20 seeds of the
# nightly, every statistic, with parallel workers.
set -x
O=${OUT:-/tmp/out}; mkdir -p $O/cal
B=build/cuda/harness/moe-harness; t1=$SECONDS
timeout 540 $B calibrate --suite nightly --kernel gpu --seeds 20 --jobs 4 --json $O/cal/calibrate.json > $O/cal/calibrate.md 2> $O/cal/stderr.txt
echo "calibrate rc=$? $((SECONDS-t1)) s" >> $O/cal/times.txt
python3 ci/summarize/systematic_margins.py $O/cal/calibrate.json > $O/cal/systematic_margins.md 2>&1
cd $O && tar czf cal.tgz cal; rm -rf cal
