#!/bin/bash
# Call 5 (eighth session): on call 4's warm machine and build (no rebuild): 20-seed GPU selftest (the mutant build
# runs the per-token quantization kernel too), bench of the five decode shapes twice, copy ceiling.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work24; mkdir -p $W
source .devrun/lib.sh
H=build/cuda/harness/moe-harness
[ -x $H ] || { echo "no warm build" | tee -a $OUT/summary.txt; exit 1; }
git log -1 --format=%h | tee -a $OUT/summary.txt
RC="--reference-cache /tmp/refcache"
step torch_baseline 60 python3 kernels/bench/torch_grouped_mm_baseline.py
grep copy_tbps $W/torch_baseline.log | tee -a $OUT/summary.txt
for i in 1 2; do
  step bench-extra-$i 120 $H run --suite .devrun/bench-extra.yaml --kernel gpu --require-device $RC --report-dir $W/bench-extra-$i
  summ $W/bench-extra-$i/report.json
done
step selftest 200 $H selftest --kernel gpu --seeds 20 --json $W/selftest.json
tail -4 $W/selftest.log | tee -a $OUT/summary.txt
finish
