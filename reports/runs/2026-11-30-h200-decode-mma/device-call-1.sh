#!/bin/bash
# Call 1 (sixth session): build, resources, GPU unit tests, bench (decode mma on, then off for the quantized shapes),
# nightly, smoke, 20-seed selftest.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work1; mkdir -p $W
START=$(date +%s)
left() { echo $(( ${DEADLINE:-570} - ($(date +%s) - START) )); }
step() {
  local name=$1 max=$2; shift 2
  local l=$(left); if [ $l -lt 15 ]; then echo "SKIPPED $name (no time left)" | tee -a $OUT/summary.txt; return; fi
  [ $max -gt $l ] && max=$l
  local t0=$(date +%s); timeout $max "$@" > $W/$name.log 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
}
finish() { tar czf $OUT/results.tgz -C $W --exclude='*.safetensors' .; }
summ() { python3 - $1 <<'PY' | tee -a $OUT/summary.txt
import json,sys
r=json.load(open(sys.argv[1]))
for c in r["cases"]:
    m=dict(c.get("metrics",{})); m.update(c.get("timing",{}))
    print(c["status"], c["id"][:60], c.get("variant","")[:40], "us=%.1f" % m.get("kernel_us",-1), "TB/s=%.3f" % m.get("achieved_tbps",-1), "TFLOP/s=%.3f" % m.get("achieved_tflops",-1), "min_cos=%.7f" % m.get("min_cos",-1), "max_rel=%.3g" % m.get("max_rel",-1))
PY
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/gpu.txt
step build 360 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness gpu_kernel_tests'
if [ ! -x build/cuda/harness/moe-harness ]; then tail -60 $W/build.log | tee -a $OUT/summary.txt; finish; exit 1; fi
H=build/cuda/harness/moe-harness
for o in mma_decode fused_moe; do
cuobjdump --dump-resource-usage build/cuda/kernels/CMakeFiles/moe_gpu.dir/moe/$o.hip.o 2>&1 | grep -A1 "Function" | paste - - | sed 's/Function \([^:]*\):.*REG:\([0-9]*\) STACK:\([0-9]*\) SHARED:\([0-9]*\) LOCAL:\([0-9]*\).*/\2 \3 \4 \5 \1/' | while read r st sh lo n; do echo "REG=$r STACK=$st SHARED=$sh LOCAL=$lo $(echo $n | c++filt | cut -c1-120)"; done >> $W/resources.txt
done
grep decode_mma $W/resources.txt | tee -a $OUT/summary.txt
step gpu_kernel_tests 90 build/cuda/harness/gpu_kernel_tests
tail -1 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt; grep -E "FAILED|Failure" -A8 $W/gpu_kernel_tests.log | head -60 | cut -c1-300 | tee -a $OUT/summary.txt
step bench 100 $H run --suite bench --kernel gpu --require-device --report-dir $W/bench
summ $W/bench/report.json
step bench_nodmma 60 env MOE_DECODE_MMA=0 $H run --suite bench --filter '*fp8blk*' --filter '*mxfp4*' --kernel gpu --require-device --report-dir $W/bench-no-decode-mma
summ $W/bench-no-decode-mma/report.json
step nightly 120 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt; grep -E "^\| (fail|error)" $W/nightly.log | head -8 | cut -c1-300 | tee -a $OUT/summary.txt
grep -c "grouped-mma-decode" $W/nightly/report.md | sed 's/^/nightly cases on grouped-mma-decode: /' | tee -a $OUT/summary.txt
step smoke 40 $H run --suite smoke --kernel gpu --require-device --no-timing --report-dir $W/smoke
grep -E "^moe-harness:" $W/smoke.log | tee -a $OUT/summary.txt
step selftest20 150 $H selftest --kernel gpu --seeds 20 --json $W/selftest-gpu-20.json
grep -E "selftest: (PASS|FAIL)|MISSED|false" $W/selftest20.log | tail -6 | tee -a $OUT/summary.txt
finish
