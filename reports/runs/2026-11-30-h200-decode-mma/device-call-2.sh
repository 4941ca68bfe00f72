#!/bin/bash
# Call 2 (sixth session): build, GPU unit tests (4 new decode cases), bench, ncu of the decode mma kernels.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work2; mkdir -p $W
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
    print(c["status"], c["id"][:60], c.get("variant","")[:40], "us=%.1f" % m.get("kernel_us",-1), "TB/s=%.3f" % m.get("achieved_tbps",-1), "max_rel=%.3g" % m.get("max_rel",-1))
PY
}
step build 360 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness gpu_kernel_tests'
if [ ! -x build/cuda/harness/moe-harness ]; then tail -60 $W/build.log | tee -a $OUT/summary.txt; finish; exit 1; fi
H=build/cuda/harness/moe-harness
step gpu_kernel_tests 90 build/cuda/harness/gpu_kernel_tests
tail -1 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt; grep -E "FAILED|Failure" -A8 $W/gpu_kernel_tests.log | head -60 | cut -c1-300 | tee -a $OUT/summary.txt
step bench 100 $H run --suite bench --filter '*fp8blk*' --filter '*mxfp4*' --kernel gpu --require-device --report-dir $W/bench
summ $W/bench/report.json
step ncu 120 ncu --clock-control none --csv --page details --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy -k regex:decode_mma --launch-count 4 $H run --suite bench --filter '*fp8blk*' --filter '*mxfp4*' --kernel gpu --no-timing --report-dir $W/ncu_run
python3 - $W/ncu.log <<'PY' | tee -a $OUT/summary.txt
import csv,sys
rows=[r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows: print("ncu: no rows"); sys.exit()
hdr=rows[0]; idx={h:i for i,h in enumerate(hdr)}
for r in rows[1:]:
    if len(r)<len(hdr): continue
    v=r[idx["Metric Value"]]
    try:
        if float(v.replace(',',''))==0: continue
    except: pass
    print(r[idx["ID"]], r[idx["Kernel Name"]][30:62], r[idx["Metric Name"]][:48], v, r[idx["Metric Unit"]])
PY
finish
