#!/bin/bash
# Last device call: build, resources, GPU unit tests, bench decode A/B (2 vs 8 tokens per pass), bench, smoke, short selftest, nightly.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work; mkdir -p $W
START=$(date +%s)
left() { echo $(( ${DEADLINE:-400} - ($(date +%s) - START) )); }
step() {
  local name=$1 max=$2; shift 2
  local l=$(left); if [ $l -lt 15 ]; then echo "SKIPPED $name (no time left)" | tee -a $OUT/summary.txt; return; fi
  [ $max -gt $l ] && max=$l
  local t0=$(date +%s); timeout $max "$@" > $W/$name.log 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
}
finish() { cp $W/gpu.txt $OUT/ 2>/dev/null; tar czf $OUT/results.tgz -C $W --exclude='*.safetensors' .; }
summ() { python3 - $1 <<'PY' | tee -a $OUT/summary.txt
import json,sys
r=json.load(open(sys.argv[1]))
for c in r["cases"]:
    m=dict(c.get("metrics",{})); m.update(c.get("timing",{}))
    print(c["status"], c["id"][:60], c.get("variant","")[:40], "us=%.1f" % m.get("kernel_us",-1), "TB/s=%.3f" % m.get("achieved_tbps",-1), "TFLOP/s=%.3f" % m.get("achieved_tflops",-1), "min_cos=%.7f" % m.get("min_cos",-1))
PY
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
step build 330 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16'
if [ ! -x build/cuda/harness/moe-harness ]; then tail -40 $W/build.log; finish; exit 1; fi
H=build/cuda/harness/moe-harness
cuobjdump --dump-resource-usage build/cuda/kernels/CMakeFiles/moe_gpu.dir/moe/fused_moe.hip.o 2>&1 | grep -A1 "Function" | paste - - | sed 's/Function \([^:]*\):.*REG:\([0-9]*\) STACK:\([0-9]*\) SHARED:\([0-9]*\) LOCAL:\([0-9]*\).*/\2 \3 \4 \5 \1/' | while read r st sh lo n; do echo "REG=$r STACK=$st LOCAL=$lo $(echo $n | c++filt | cut -c1-120)"; done > $W/resources.txt
grep -E "grouped_stage_kernel<0, 8|grouped_stage_kernel<6" $W/resources.txt >> $OUT/summary.txt
step gpu_kernel_tests 60 build/cuda/harness/gpu_kernel_tests
tail -1 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt; grep -E "FAILED|Failure" -A8 $W/gpu_kernel_tests.log | head -40 | cut -c1-300 | tee -a $OUT/summary.txt
if ! grep -q "PASSED" $W/gpu_kernel_tests.log || grep -q "FAILED" $W/gpu_kernel_tests.log; then finish; exit 1; fi
step bench 70 $H run --suite bench --kernel gpu --require-device --report-dir $W/bench
summ $W/bench/report.json
step bench_kt8 40 env MOE_GROUPED_TOKENS_PER_PASS=8 $H run --suite bench --filter '*decode*' --kernel gpu --require-device --report-dir $W/bench_kt8
echo "-- decode with 8 tokens per pass (A/B)" >> $OUT/summary.txt; summ $W/bench_kt8/report.json
step smoke 30 $H run --suite smoke --kernel gpu --require-device --no-timing --report-dir $W/smoke
grep -E "^moe-harness:" $W/smoke.log | tee -a $OUT/summary.txt
step selftest 60 $H selftest --kernel gpu --suite selftest --seeds 2 --json $W/selftest-3.json
grep -E "selftest:" $W/selftest.log | tail -2 | tee -a $OUT/summary.txt
step nightly 90 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt; grep -E "^\| (fail|error)" $W/nightly.log | head -5 | cut -c1-300 | tee -a $OUT/summary.txt
step torch_baseline 30 python3 kernels/bench/torch_grouped_mm_baseline.py
finish
