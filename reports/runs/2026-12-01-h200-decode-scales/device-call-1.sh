#!/bin/bash
# Call 1 (eighth session): baseline bench of the five decode shapes + copy ceiling, per-kernel durations of the whole
# pipeline for each shape, per-PC stall samples of the MXFP4 and fp8-channel stage-1 decode kernels, SASS dump.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work20; mkdir -p $W
source .devrun/lib.sh
build_cuda
RC="--reference-cache /tmp/refcache"
step bench-extra 120 $H run --suite .devrun/bench-extra.yaml --kernel gpu --require-device $RC --report-dir $W/bench-extra
summ $W/bench-extra/report.json
step torch_baseline 60 python3 kernels/bench/torch_grouped_mm_baseline.py
tail -4 $W/torch_baseline.log | tee -a $OUT/summary.txt
step sass 60 bash -c "cuobjdump -sass build/cuda/kernels/CMakeFiles/moe_gpu.dir/moe/mma_decode.hip.o > $W/mma_decode.sass"
step ncu_all 150 ncu --clock-control none --csv --page raw --metrics gpu__time_duration.sum $H run --suite .devrun/bench-extra.yaml --kernel gpu --no-timing $RC --report-dir $W/ncu_all_run
python3 - $W/ncu_all.log <<'PY' | tee -a $OUT/summary.txt
import csv,sys
rows=list(csv.reader(open(sys.argv[1], errors="replace")))
for i,r in enumerate(rows):
    if "Kernel Name" in r: h=r; data=rows[i+2:]; break
else: print("no rows"); sys.exit()
k=h.index("Kernel Name"); t=h.index("gpu__time_duration.sum")
for d in data:
    if len(d)==len(h): print("%10s  %s" % (d[t], d[k][:110]))
PY
step ncu_src_mxfp4 150 ncu --clock-control none --section SourceCounters --section WarpStateStats --page source --print-source sass --csv -k regex:'decode_mma_kernel<6' --launch-count 1 $H run --suite .devrun/bench-extra.yaml --filter '*gpt-oss*' --filter '-*a8w4*' --kernel gpu --no-timing $RC --report-dir $W/ncu_src_run
step ncu_src_fp8ch 120 ncu --clock-control none --section SourceCounters --section WarpStateStats --page source --print-source sass --csv -k regex:'decode_mma_kernel<3' --launch-count 1 $H run --suite .devrun/bench-extra.yaml --filter '*fp8ch*' --kernel gpu --no-timing $RC --report-dir $W/ncu_src_run2
for f in ncu_src_mxfp4 ncu_src_fp8ch; do head -c 1500 $W/$f.log | tee -a $OUT/summary.txt; echo | tee -a $OUT/summary.txt; done
finish
