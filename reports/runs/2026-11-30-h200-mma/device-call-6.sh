#!/bin/bash
# Call 6 (fifth session, last device minutes): MXFP4 few-token kernels with more chunks in flight (stage 1: 4, stage 2: 6); build, then the quantized decode bench cases.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work6; mkdir -p $W
t0=$(date +%s)
(cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness) > $W/build.log 2>&1
echo "== build rc=$? $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
t0=$(date +%s)
build/cuda/harness/moe-harness run --suite bench --filter '*mxfp4*' --filter '*fp8blk*' --kernel gpu --require-device --report-dir $W/bench > $W/bench.log 2>&1
echo "== bench rc=$? $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
python3 - $W/bench/report.json <<'PY' | tee -a $OUT/summary.txt
import json,sys
r=json.load(open(sys.argv[1]))
for c in r["cases"]:
    m=dict(c.get("metrics",{})); m.update(c.get("timing",{}))
    print(c["status"], c["id"][:60], c.get("variant","")[:40], "us=%.1f" % m.get("kernel_us",-1), "TB/s=%.3f" % m.get("achieved_tbps",-1), "min_cos=%.7f" % m.get("min_cos",-1))
PY
cp $W/bench/report.json $OUT/bench-report.json 2>/dev/null
