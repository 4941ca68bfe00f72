#!/bin/bash
# Call 5 (fifth session): the same 20-seed calibration of the nightly bf16 prefill cases with the matrix-instruction kernels switched off (MOE_GROUPED_MMA=0): the SIMT kernels' worst error on the same runs.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work5; mkdir -p $W
START=$(date +%s)
left() { echo $(( ${DEADLINE:-480} - ($(date +%s) - START) )); }
step() {
  local name=$1 max=$2; shift 2
  local l=$(left); if [ $l -lt 15 ]; then echo "SKIPPED $name (no time left)" | tee -a $OUT/summary.txt; return; fi
  [ $max -gt $l ] && max=$l
  local t0=$(date +%s); timeout $max "$@" > $W/$name.log 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
}
finish() { tar czf $OUT/results5.tgz -C $W --exclude='*.safetensors' .; }
step build 300 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness'
H=build/cuda/harness/moe-harness
step calibrate_nomma 240 env MOE_GROUPED_MMA=0 $H calibrate --suite nightly --filter '*/bf16.a16*/prefill/*' --kernel gpu --seeds 20 --json $W/calibrate-prefill-bf16-no-mma.json
tail -6 $W/calibrate_nomma.log | tee -a $OUT/summary.txt
finish
