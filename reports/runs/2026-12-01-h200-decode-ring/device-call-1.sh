#!/bin/bash
# Call 1 (seventh session): profile of the MXFP4 decode mma kernels as committed (a44fb01): bench, ncu (speed of
# light, warp states with the stall reasons, memory, instructions), the SASS of mma_decode.hip.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work1; mkdir -p $W
source reports/runs/2026-12-01-h200-decode-ring/device-lib.sh
build_cuda
step gpu_kernel_tests 90 build/cuda/harness/gpu_kernel_tests
tail -1 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt
step bench 60 $H run --suite bench --filter '*mxfp4*' --filter '*fp8blk*' --kernel gpu --require-device --report-dir $W/bench
summ $W/bench/report.json
O=build/cuda/kernels/CMakeFiles/moe_gpu.dir/moe/mma_decode.hip.o
step sass 60 bash -c "cuobjdump -sass $O > $W/mma_decode.sass; cuobjdump -res-usage $O > $W/mma_decode.res"
step ncu 150 ncu --clock-control none --csv --page details --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis --section InstructionStats -k regex:decode_mma --launch-count 2 $H run --suite bench --filter '*mxfp4*' --kernel gpu --no-timing --report-dir $W/ncu_run
ncu_summary $W/ncu.log
step ncu_raw 150 ncu --clock-control none --csv --page raw --section WarpStateStats -k regex:decode_mma --launch-count 2 $H run --suite bench --filter '*mxfp4*' --kernel gpu --no-timing --report-dir $W/ncu_run2
python3 - $W/ncu_raw.log <<'PY' | tee -a $OUT/summary.txt
import csv,sys
rows=list(csv.reader(open(sys.argv[1], errors="replace")))
for i,r in enumerate(rows):
    if "Kernel Name" in r: h=r; data=rows[i+2:]; break
else: print("no raw"); sys.exit()
for d in data:
    if len(d)!=len(h): continue
    kn=d[h.index("Kernel Name")][:50]
    st=sorted(((float(d[j]) if d[j].replace('.','',1).isdigit() else 0.0, h[j]) for j in range(len(h)) if "issue_stalled" in h[j] and "per_warp_active" in h[j]), reverse=True)[:8]
    print(kn, "; ".join("%s=%.2f" % (n.split("stalled_")[1].split("_per")[0], v) for v,n in st))
PY
finish
