#!/bin/bash
# Call 2 (eighth session): scales fetched a step ahead and decoded at use, row pointers located once, int columns,
# per-token activation quantization one block per row. Tests, bench of the five decode shapes + copy ceiling,
# per-kernel durations, stall reasons, per-PC samples of the MXFP4 stage-1 kernel, nightly, SASS.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work21; mkdir -p $W
source .devrun/lib.sh
build_cuda
step gpu_kernel_tests 90 build/cuda/harness/gpu_kernel_tests
tail -1 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt; grep -E "FAILED|Failure" -A8 $W/gpu_kernel_tests.log | head -30 | cut -c1-300 | tee -a $OUT/summary.txt
RC="--reference-cache /tmp/refcache"
step bench-extra 120 $H run --suite .devrun/bench-extra.yaml --kernel gpu --require-device $RC --report-dir $W/bench-extra
summ $W/bench-extra/report.json
step torch_baseline 60 python3 kernels/bench/torch_grouped_mm_baseline.py
grep copy_tbps $W/torch_baseline.log | tee -a $OUT/summary.txt
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
    if len(d)==len(h) and ("decode_mma" in d[k] or "quantize" in d[k]): print("%10s  %s" % (d[t], d[k][:70]))
PY
step ncu_raw 120 ncu --clock-control none --csv --page raw --section SpeedOfLight --section WarpStateStats --section Occupancy --section InstructionStats -k regex:decode_mma --launch-count 4 $H run --suite .devrun/bench-extra.yaml --filter '*mxfp*' --filter '-*a8w4*' --kernel gpu --no-timing $RC --report-dir $W/ncu_run
python3 .devrun/ncu_stalls.py $W/ncu_raw.log | tee -a $OUT/summary.txt
step ncu_src 120 ncu --clock-control none --section SourceCounters --section WarpStateStats --page source --print-source sass --csv -k regex:decode_mma_kernel --launch-count 1 $H run --suite .devrun/bench-extra.yaml --filter '*gpt-oss*' --filter '-*a8w4*' --kernel gpu --no-timing $RC --report-dir $W/ncu_src_run
head -c 600 $W/ncu_src.log | tee -a $OUT/summary.txt; echo
step nightly 200 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt; grep -E "^\| (fail|error)" $W/nightly.log | head -8 | cut -c1-300 | tee -a $OUT/summary.txt
finish
