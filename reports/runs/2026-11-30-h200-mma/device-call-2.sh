#!/bin/bash
# Call 2 (fifth session, same warm machine): nightly, smoke, 20-seed GPU selftest, prefill A/B without matrix instructions.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work2; mkdir -p $W
START=$(date +%s)
left() { echo $(( ${DEADLINE:-560} - ($(date +%s) - START) )); }
step() {
  local name=$1 max=$2; shift 2
  local l=$(left); if [ $l -lt 15 ]; then echo "SKIPPED $name (no time left)" | tee -a $OUT/summary.txt; return; fi
  [ $max -gt $l ] && max=$l
  local t0=$(date +%s); timeout $max "$@" > $W/$name.log 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
}
finish() { tar czf $OUT/results2.tgz -C $W --exclude='*.safetensors' .; }
summ() { python3 - $1 <<'PY' | tee -a $OUT/summary.txt
import json,sys
r=json.load(open(sys.argv[1]))
for c in r["cases"]:
    m=dict(c.get("metrics",{})); m.update(c.get("timing",{}))
    print(c["status"], c["id"][:60], c.get("variant","")[:40], "us=%.1f" % m.get("kernel_us",-1), "TB/s=%.3f" % m.get("achieved_tbps",-1), "TFLOP/s=%.3f" % m.get("achieved_tflops",-1), "min_cos=%.7f" % m.get("min_cos",-1))
PY
}
step build 300 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness gpu_kernel_tests'
H=build/cuda/harness/moe-harness
step nightly 120 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt; grep -E "^\| (fail|error)" $W/nightly.log | head -5 | cut -c1-300 | tee -a $OUT/summary.txt
step smoke 40 $H run --suite smoke --kernel gpu --require-device --no-timing --report-dir $W/smoke
grep -E "^moe-harness:" $W/smoke.log | tee -a $OUT/summary.txt
step selftest20 200 $H selftest --kernel gpu --seeds 20 --json $W/selftest-gpu-20.json
grep -E "selftest:|PASS|FAIL" $W/selftest20.log | tail -4 | tee -a $OUT/summary.txt
step bench_nomma 120 env MOE_GROUPED_MMA=0 $H run --suite bench --filter "${PREFILL_FILTER:-*}" --kernel gpu --require-device --report-dir $W/bench_nomma
summ $W/bench_nomma/report.json
finish
