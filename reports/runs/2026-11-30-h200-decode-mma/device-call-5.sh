#!/bin/bash
# Call 5 (sixth session): MXFP4 straight to bf16 pairs (one bf16 multiply per pair) in the decode mma kernels:
# build, GPU unit tests, bench, nightly, then (if all pass) the 20-seed calibration of the nightly MXFP4 decode cases.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work5; mkdir -p $W
START=$(date +%s)
left() { echo $(( ${DEADLINE:-585} - ($(date +%s) - START) )); }
step() {
  local name=$1 max=$2; shift 2
  local l=$(left); if [ $l -lt 15 ]; then echo "SKIPPED $name (no time left)" | tee -a $OUT/summary.txt; return; fi
  [ $max -gt $l ] && max=$l
  local t0=$(date +%s); timeout $max "$@" > $W/$name.log 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
  return $rc
}
finish() { tar czf $OUT/results.tgz -C $W --exclude='*.safetensors' .; }
summ() { python3 - $1 <<'PY' | tee -a $OUT/summary.txt
import json,sys
r=json.load(open(sys.argv[1]))
for c in r["cases"]:
    m=dict(c.get("metrics",{})); m.update(c.get("timing",{}))
    print(c["status"], c["id"][:62], c.get("variant","")[:50], "us=%.1f" % m.get("kernel_us",-1), "TB/s=%.3f" % m.get("achieved_tbps",-1), "max_rel=%.3g" % m.get("max_rel",-1))
PY
}
step build 360 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness gpu_kernel_tests'
if [ ! -x build/cuda/harness/moe-harness ]; then tail -60 $W/build.log | tee -a $OUT/summary.txt; finish; exit 1; fi
H=build/cuda/harness/moe-harness
step gpu_kernel_tests 90 build/cuda/harness/gpu_kernel_tests; ok1=$?
tail -1 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt; grep -E "FAILED|Failure" -A8 $W/gpu_kernel_tests.log | head -30 | cut -c1-300 | tee -a $OUT/summary.txt
step bench 60 $H run --suite bench --filter '*mxfp4*' --filter '*fp8blk*' --kernel gpu --require-device --report-dir $W/bench
summ $W/bench/report.json
step nightly 150 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly; ok2=$?
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt; grep -E "^\| (fail|error)" $W/nightly.log | head -8 | cut -c1-300 | tee -a $OUT/summary.txt
if [ $ok1 -eq 0 ] && [ $ok2 -eq 0 ]; then
  step calibrate 300 $H calibrate --suite nightly --filter '*mxfp4*decode*' --kernel gpu --seeds 20 --json $W/calibrate-mxfp4-decode.json
  tail -8 $W/calibrate.log | tee -a $OUT/summary.txt
  cp $W/calibrate.log $W/calibrate-mxfp4-decode.json $OUT/ 2>/dev/null
fi
finish
