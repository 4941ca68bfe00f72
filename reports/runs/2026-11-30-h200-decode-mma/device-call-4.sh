#!/bin/bash
# Call 4 (sixth session): build, GPU unit tests (separate shared path cases), nightly (15 new separate-path cases),
# smoke, bench with the torch baseline (copy ceiling) in the same call.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work4; mkdir -p $W
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
    print(c["status"], c["id"][:62], c.get("variant","")[:60], "us=%.1f" % m.get("kernel_us",-1), "TB/s=%.3f" % m.get("achieved_tbps",-1), "TFLOP/s=%.3f" % m.get("achieved_tflops",-1), "max_rel=%.3g" % m.get("max_rel",-1))
PY
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/gpu.txt
step build 360 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness gpu_kernel_tests'
if [ ! -x build/cuda/harness/moe-harness ]; then tail -60 $W/build.log | tee -a $OUT/summary.txt; finish; exit 1; fi
H=build/cuda/harness/moe-harness
step gpu_kernel_tests 90 build/cuda/harness/gpu_kernel_tests
tail -1 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt; grep -E "FAILED|Failure" -A8 $W/gpu_kernel_tests.log | head -40 | cut -c1-300 | tee -a $OUT/summary.txt
step nightly 150 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt; grep -E "^\| (fail|error)" $W/nightly.log | head -8 | cut -c1-300 | tee -a $OUT/summary.txt
python3 - $W/nightly/report.json <<'PY' | tee -a $OUT/summary.txt
import json,sys
r=json.load(open(sys.argv[1]))
for c in r["cases"]:
    if "-sep/" in c["id"]: print(c["status"], c["id"], c.get("variant",""), "max_rel=%.3g" % c.get("metrics",{}).get("max_rel",-1))
PY
step smoke 40 $H run --suite smoke --kernel gpu --require-device --no-timing --report-dir $W/smoke
grep -E "^moe-harness:" $W/smoke.log | tee -a $OUT/summary.txt
step bench 100 $H run --suite bench --kernel gpu --require-device --report-dir $W/bench
summ $W/bench/report.json
step torch_baseline 60 python3 kernels/bench/torch_grouped_mm_baseline.py
tail -12 $W/torch_baseline.log | tee -a $OUT/summary.txt
cp $W/torch_baseline.log $OUT/ 2>/dev/null
finish
