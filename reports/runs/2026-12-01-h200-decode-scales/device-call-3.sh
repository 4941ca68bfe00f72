#!/bin/bash
# Call 3 (eighth session): scale loads issued before the copies of the step two ahead. Tests, bench + copy ceiling,
# stall reasons and per-PC samples of the MXFP4 stage-1 kernel, the fp8-per-channel bench repeated and traced
# (its bench time is ~48 us above the sum of its kernels in call 2), nightly.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work22; mkdir -p $W
source .devrun/lib.sh
build_cuda
step gpu_kernel_tests 90 build/cuda/harness/gpu_kernel_tests
tail -1 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt; grep -E "FAILED|Failure" -A8 $W/gpu_kernel_tests.log | head -30 | cut -c1-300 | tee -a $OUT/summary.txt
RC="--reference-cache /tmp/refcache"
step bench-extra 120 $H run --suite .devrun/bench-extra.yaml --kernel gpu --require-device $RC --report-dir $W/bench-extra
summ $W/bench-extra/report.json
step torch_baseline 60 python3 kernels/bench/torch_grouped_mm_baseline.py
grep copy_tbps $W/torch_baseline.log | tee -a $OUT/summary.txt
for i in 1 2 3; do
  step fp8ch-$i 60 $H run --suite .devrun/bench-extra.yaml --filter '*fp8ch*' --filter '*fp8blk*' --kernel gpu --require-device $RC --report-dir $W/fp8ch-$i
  summ $W/fp8ch-$i/report.json
done
step sass 60 bash -c "cuobjdump -sass build/cuda/kernels/CMakeFiles/moe_gpu.dir/moe/mma_decode.hip.o > $W/mma_decode.sass"
if command -v nsys >/dev/null; then
  step nsys 120 nsys profile --force-overwrite true -o $W/fp8ch $H run --suite .devrun/bench-extra.yaml --filter '*fp8ch*' --kernel gpu --require-device $RC --report-dir $W/nsys_run
  step nsys_trace 60 nsys stats --report cuda_gpu_trace --format csv --output $W/fp8ch_trace $W/fp8ch.nsys-rep
  ls $W | tee -a $OUT/summary.txt
else
  echo "no nsys" | tee -a $OUT/summary.txt
fi
step ncu_raw 120 ncu --clock-control none --csv --page raw --section SpeedOfLight --section WarpStateStats --section Occupancy --section InstructionStats -k regex:decode_mma --launch-count 2 $H run --suite .devrun/bench-extra.yaml --filter '*gpt-oss*' --filter '-*a8w4*' --kernel gpu --no-timing $RC --report-dir $W/ncu_run
python3 .devrun/ncu_stalls.py $W/ncu_raw.log | tee -a $OUT/summary.txt
step ncu_src 120 ncu --clock-control none --section SourceCounters --section WarpStateStats --page source --print-source sass --csv -k regex:decode_mma_kernel --launch-count 1 $H run --suite .devrun/bench-extra.yaml --filter '*gpt-oss*' --filter '-*a8w4*' --kernel gpu --no-timing $RC --report-dir $W/ncu_src_run
step nightly 200 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt; grep -E "^\| (fail|error)" $W/nightly.log | head -8 | cut -c1-300 | tee -a $OUT/summary.txt
finish
