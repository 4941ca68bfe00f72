#!/bin/bash
set -u
cd "$(dirname "$0")/.."
W=/tmp/work; mkdir -p $W
START=$(date +%s)
left() { echo $(( ${DEADLINE:-190} - ($(date +%s) - START) )); }
step() {
  local name=$1 max=$2; shift 2
  local l=$(left); if [ $l -lt 10 ]; then echo "SKIPPED $name (no time left)" | tee -a $OUT/summary.txt; return; fi
  [ $max -gt $l ] && max=$l
  local t0=$(date +%s); timeout $max "$@" > $W/$name.log 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
}
step build 170 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness'
[ -x build/cuda/harness/moe-harness ] || { tail -30 $W/build.log; exit 1; }
H=build/cuda/harness/moe-harness
step smoke 20 $H run --suite smoke --kernel gpu --require-device --no-timing --report-dir $W/smoke
grep -E "^moe-harness:" $W/smoke.log | tee -a $OUT/summary.txt
step bench 40 $H run --suite bench --filter '*decode*' --kernel gpu --require-device --report-dir $W/bench
python3 - $W/bench/report.json <<'PY' | tee -a $OUT/summary.txt
import json,sys
r=json.load(open(sys.argv[1]))
for c in r["cases"]:
    m=dict(c.get("metrics",{})); m.update(c.get("timing",{}))
    print(c["status"], c["id"][:70], c.get("variant",""), "us=%.1f" % m.get("kernel_us",-1), "TB/s=%.3f" % m.get("achieved_tbps",-1), "min_cos=%.7f" % m.get("min_cos",-1))
PY
step torch_baseline 20 python3 kernels/bench/torch_grouped_mm_baseline.py
step nightly 70 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt
tar czf $OUT/results.tgz -C $W --exclude='*.safetensors' --exclude='build.log' .
cp $W/build.log $OUT/ 2>/dev/null
