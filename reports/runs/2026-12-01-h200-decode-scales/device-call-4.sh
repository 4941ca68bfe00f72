#!/bin/bash
# Call 4 (eighth session): the call-3 tree unchanged. 20-seed calibration of the nightly quantized decode cases
# (the same command as the ring's), GPU unit tests.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work23; mkdir -p $W
DEADLINE=590
source .devrun/lib.sh
build_cuda
step gpu_kernel_tests 60 build/cuda/harness/gpu_kernel_tests
tail -1 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt
step calibrate 440 $H calibrate --suite nightly --filter '*decode*' --filter '-*bf16.a16*' --kernel gpu --seeds 20 --json $W/calibrate.json
tail -25 $W/calibrate.log | tee -a $OUT/summary.txt
cp $W/calibrate.json $W/calibrate.log $OUT/ 2>/dev/null
finish
