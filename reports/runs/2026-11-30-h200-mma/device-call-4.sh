#!/bin/bash
# Call 4 (fifth session): build, 20-seed calibration of the nightly bf16 prefill cases (matrix-instruction kernels), ncu of the quantized decode shapes.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work4; mkdir -p $W
START=$(date +%s)
left() { echo $(( ${DEADLINE:-560} - ($(date +%s) - START) )); }
step() {
  local name=$1 max=$2; shift 2
  local l=$(left); if [ $l -lt 15 ]; then echo "SKIPPED $name (no time left)" | tee -a $OUT/summary.txt; return; fi
  [ $max -gt $l ] && max=$l
  local t0=$(date +%s); timeout $max "$@" > $W/$name.log 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
}
finish() { tar czf $OUT/results4.tgz -C $W --exclude='*.safetensors' .; }
step build 360 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness gpu_kernel_tests'
if [ ! -x build/cuda/harness/moe-harness ]; then tail -60 $W/build.log | tee -a $OUT/summary.txt; finish; exit 1; fi
H=build/cuda/harness/moe-harness
step calibrate 260 $H calibrate --suite nightly --filter '*/bf16.a16*/prefill/*' --kernel gpu --seeds 20 --json $W/calibrate-prefill-bf16.json
tail -8 $W/calibrate.log | tee -a $OUT/summary.txt
step ncu 90 ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread --launch-count 40 $H run --suite bench --filter '*fp8blk*' --filter '*mxfp4*' --kernel gpu --no-timing --report-dir $W/ncu_run
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
for (i,n),m in list(agg.items())[:40]:
    print(i, n, " ".join("%s=%s"%(a.split('__')[1][:22],b) for a,b in m.items()))
PY
finish
