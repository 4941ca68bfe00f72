#!/bin/bash
# Call 2 (seventh session): the decode mma kernels with a per-warp cp.async ring (weights and B, depth 3; depth 4
# by MOE_DECODE_STAGES=4): build, GPU unit tests, bench at both depths, nightly, ncu of the MXFP4 kernels.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work2; mkdir -p $W
source reports/runs/2026-12-01-h200-decode-ring/device-lib.sh
build_cuda
step gpu_kernel_tests 90 build/cuda/harness/gpu_kernel_tests; ok1=$?
tail -1 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt; grep -E "FAILED|Failure" -A8 $W/gpu_kernel_tests.log | head -30 | cut -c1-300 | tee -a $OUT/summary.txt
step bench 60 $H run --suite bench --filter '*mxfp4*' --filter '*fp8blk*' --kernel gpu --require-device --report-dir $W/bench
summ $W/bench/report.json
step bench4 60 env MOE_DECODE_STAGES=4 $H run --suite bench --filter '*mxfp4*' --filter '*fp8blk*' --kernel gpu --require-device --report-dir $W/bench4
summ $W/bench4/report.json
step nightly 150 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly; ok2=$?
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt; grep -E "^\| (fail|error)" $W/nightly.log | head -8 | cut -c1-300 | tee -a $OUT/summary.txt
step ncu 150 ncu --clock-control none --csv --page details --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis --section InstructionStats -k regex:decode_mma --launch-count 2 $H run --suite bench --filter '*mxfp4*' --kernel gpu --no-timing --report-dir $W/ncu_run
ncu_summary $W/ncu.log
finish
