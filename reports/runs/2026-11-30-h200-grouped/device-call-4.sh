#!/bin/bash
# One device call: build, GPU unit tests, bench (speed), nightly, torch baselines, smoke, short GPU selftest.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work; mkdir -p $W
START=$(date +%s)
left() { echo $(( ${DEADLINE:-470} - ($(date +%s) - START) )); }
step() {  # step NAME MAXSECONDS CMD...
  local name=$1 max=$2; shift 2
  local l=$(left); if [ $l -lt 15 ]; then echo "SKIPPED $name (no time left)" | tee -a $OUT/summary.txt; return; fi
  [ $max -gt $l ] && max=$l
  local t0=$(date +%s); timeout $max "$@" > $W/$name.log 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
step build 200 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16'
if [ ! -x build/cuda/harness/moe-harness ]; then tail -40 $W/build.log; cp $W/build.log $OUT/; exit 1; fi
H=build/cuda/harness/moe-harness
step gpu_kernel_tests 90 build/cuda/harness/gpu_kernel_tests
tail -4 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt; grep -E "FAILED|Failure|error" $W/gpu_kernel_tests.log | head -20 | tee -a $OUT/summary.txt
step bench 150 $H run --suite bench --kernel gpu --require-device --report-dir $W/bench
python3 - $W/bench/report.json <<'PY' | tee -a $OUT/summary.txt
import json,sys
r=json.load(open(sys.argv[1]))
for c in r["cases"]:
    m=dict(c.get("metrics",{})); m.update(c.get("timing",{}))
    print(c["status"], c["id"][:70], c.get("variant",""), "us=%.1f" % m.get("kernel_us",-1), "TB/s=%.3f" % m.get("achieved_tbps",-1), "TFLOP/s=%.3f" % m.get("achieved_tflops",-1), "min_cos=%.7f" % m.get("min_cos",-1), "max_rel=%.2e" % m.get("max_rel",-1))
PY
step nightly 100 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt; grep -E "^\| (fail|error)" $W/nightly.log | head -10 | cut -c1-300 | tee -a $OUT/summary.txt
step torch_baseline 80 python3 kernels/bench/torch_grouped_mm_baseline.py
cat $W/torch_baseline.log | tail -5 | cut -c1-2000 >> $OUT/summary.txt
step smoke 50 $H run --suite smoke --kernel gpu --require-device --no-timing --report-dir $W/smoke
grep -E "^moe-harness:" $W/smoke.log | tee -a $OUT/summary.txt
step selftest 90 $H selftest --kernel gpu --suite selftest --seeds 3 --json $W/selftest.json
grep -E "^[a-z_0-9]+ \(|selftest:|MISSED|FALSE" $W/selftest.log | cut -c1-60 | tee -a $OUT/summary.txt
cp $W/gpu.txt $OUT/
tar czf $OUT/results.tgz -C $W --exclude='*.safetensors' .
ls -la $OUT
