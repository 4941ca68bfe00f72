#!/bin/bash
# Device call: build, resource usage, GPU unit tests, bench, ncu per-kernel times on the decode shapes, nightly, smoke, torch.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work; mkdir -p $W
START=$(date +%s)
left() { echo $(( ${DEADLINE:-560} - ($(date +%s) - START) )); }
step() {  # step NAME MAXSECONDS CMD...
  local name=$1 max=$2; shift 2
  local l=$(left); if [ $l -lt 15 ]; then echo "SKIPPED $name (no time left)" | tee -a $OUT/summary.txt; return; fi
  [ $max -gt $l ] && max=$l
  local t0=$(date +%s); timeout $max "$@" > $W/$name.log 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
}
finish() { cp $W/gpu.txt $OUT/ 2>/dev/null; tar czf $OUT/results.tgz -C $W --exclude='*.safetensors' .; ls -la $OUT; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
step build 330 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16'
if [ ! -x build/cuda/harness/moe-harness ]; then tail -40 $W/build.log; finish; exit 1; fi
H=build/cuda/harness/moe-harness
cuobjdump --dump-resource-usage build/cuda/kernels/CMakeFiles/moe_gpu.dir/moe/fused_moe.hip.o 2>&1 | grep -A1 "Function" | paste - - | sed 's/Function \([^:]*\):.*REG:\([0-9]*\) STACK:\([0-9]*\) SHARED:\([0-9]*\) LOCAL:\([0-9]*\).*/\2 \3 \4 \5 \1/' | while read r st sh lo n; do echo "REG=$r STACK=$st LOCAL=$lo $(echo $n | c++filt | cut -c1-120)"; done > $W/resources.txt
grep grouped $W/resources.txt | tee -a $OUT/summary.txt
step gpu_kernel_tests 90 build/cuda/harness/gpu_kernel_tests
tail -3 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt; grep -E "FAILED|Failure" $W/gpu_kernel_tests.log | head -20 | tee -a $OUT/summary.txt
summ() { python3 - $1 <<'PY' | tee -a $OUT/summary.txt
import json,sys
r=json.load(open(sys.argv[1]))
for c in r["cases"]:
    m=dict(c.get("metrics",{})); m.update(c.get("timing",{}))
    print(c["status"], c["id"][:60], c.get("variant","")[:40], "us=%.1f" % m.get("kernel_us",-1), "TB/s=%.3f" % m.get("achieved_tbps",-1), "TFLOP/s=%.3f" % m.get("achieved_tflops",-1), "min_cos=%.7f" % m.get("min_cos",-1))
PY
}
step bench 150 $H run --suite bench --kernel gpu --require-device --report-dir $W/bench
summ $W/bench/report.json
step ncu 100 ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size --launch-count 80 $H run --suite bench --filter '*decode*' --kernel gpu --no-timing --report-dir $W/ncu_run
python3 - $W/ncu.log <<'PY' | tee -a $OUT/summary.txt
import csv,sys,collections
rows=[r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows: print("ncu: no rows"); sys.exit()
hdr=rows[0]; idx={h:i for i,h in enumerate(hdr)}
agg=collections.OrderedDict()
for r in rows[1:]:
    if len(r)<len(hdr): continue
    k=(r[idx["ID"]], r[idx["Kernel Name"]][:70])
    agg.setdefault(k,{})[r[idx["Metric Name"]]]=r[idx["Metric Value"]]
for (i,n),m in list(agg.items())[:80]:
    print(i, n, " ".join("%s=%s"%(a.split('__')[1][:22],b) for a,b in m.items()))
PY
step nightly 100 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt; grep -E "^\| (fail|error)" $W/nightly.log | head -10 | cut -c1-300 | tee -a $OUT/summary.txt
step smoke 50 $H run --suite smoke --kernel gpu --require-device --no-timing --report-dir $W/smoke
grep -E "^moe-harness:" $W/smoke.log | tee -a $OUT/summary.txt
step torch_baseline 80 python3 kernels/bench/torch_grouped_mm_baseline.py
tail -5 $W/torch_baseline.log | cut -c1-2000 >> $OUT/summary.txt
finish
