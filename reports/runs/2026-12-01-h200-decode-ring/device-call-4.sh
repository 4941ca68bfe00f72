#!/bin/bash
# Call 4 (seventh session): the decode mma kernels as committed (3-deep per-warp cp.async ring, B through L1, fp8 /
# MXFP8 chunks 64 apart, MXFP4 decoder chosen once per tile and step): build, GPU unit tests, bench (suite + five
# decode shapes), the copy ceiling in the same call, nightly, smoke, ncu of the MXFP4 kernels with stall reasons.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work4; mkdir -p $W
source reports/runs/2026-12-01-h200-decode-ring/device-lib.sh
build_cuda
step gpu_kernel_tests 90 build/cuda/harness/gpu_kernel_tests; ok1=$?
tail -1 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt; grep -E "FAILED|Failure" -A8 $W/gpu_kernel_tests.log | head -30 | cut -c1-300 | tee -a $OUT/summary.txt
RC="--reference-cache /tmp/refcache"
step bench 90 $H run --suite bench --filter '*mxfp4*' --filter '*fp8blk*' --kernel gpu --require-device $RC --report-dir $W/bench
summ $W/bench/report.json
step bench-extra 90 $H run --suite reports/runs/2026-12-01-h200-decode-ring/bench-extra.yaml --kernel gpu --require-device $RC --report-dir $W/bench-extra
summ $W/bench-extra/report.json
step torch_baseline 90 python3 kernels/bench/torch_grouped_mm_baseline.py
tail -12 $W/torch_baseline.log | tee -a $OUT/summary.txt
step nightly 150 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly; ok2=$?
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt; grep -E "^\| (fail|error)" $W/nightly.log | head -8 | cut -c1-300 | tee -a $OUT/summary.txt
step smoke 60 $H run --suite smoke --kernel gpu --require-device --no-timing --report-dir $W/smoke
grep -E "^moe-harness:" $W/smoke.log | tee -a $OUT/summary.txt
step ncu_raw 90 ncu --clock-control none --csv --page raw --section SpeedOfLight --section WarpStateStats --section Occupancy --section InstructionStats -k regex:decode_mma --launch-count 2 $H run --suite bench --filter '*mxfp4*' --kernel gpu --no-timing $RC --report-dir $W/ncu_run
python3 reports/runs/2026-12-01-h200-decode-ring/ncu_stalls.py $W/ncu_raw.log | tee -a $OUT/summary.txt
finish
