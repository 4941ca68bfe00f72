#!/usr/bin/env bash
# Device call 2 (issue 33), after the expert statistic's floor on quantized-activation schemes became 3e-2: build
# the cuda preset, then at once
#   - calibrate the GPU kernels over the nightly's decode cases (20 seeds) and prefill cases (5 seeds): no false
#     alarm of our kernels with the offset, token_gain and slot-regression expert statistics;
#   - selftest over 20 seeds on the GPU kernels with that floor;
#   - the torch panel member (fp8 GEMMs on the H200's fp8 units) over the whole nightly again, three shards.
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$O/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
B=build/cuda/harness/moe-harness
left() { echo $(( ${BUDGET:-560} - (SECONDS - start) )); }
step() {
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 20 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
step calibrate-decode $B calibrate --suite nightly --filter '*decode*' --kernel gpu --seeds 20 --jobs 3 --job-threads 1 \
  --json $L/calibrate-decode.json &
step calibrate-prefill $B calibrate --suite nightly --filter '*prefill*' --kernel gpu --seeds 5 --jobs 3 --job-threads 2 \
  --json $L/calibrate-prefill.json &
step selftest $B selftest --kernel gpu --seeds 20 --jobs 2 --job-threads 1 --json $L/selftest.json &
export PYTHONPATH=$PWD/build/cuda/python OMP_NUM_THREADS=1
for s in 0 1 2; do
  step panel-vllm-torch-$s python3 kernels/panel/run_panel.py --suite nightly --members vllm-torch --shard $s/3 --verbose &
done
wait
for f in decode prefill; do python3 ci/summarize/systematic_margins.py $L/calibrate-$f.json > $L/calibrate-$f-systematic.md 2>&1; done
grep -h "^FALSE ALARM\|^  reason\| passed, " $L/panel-*.txt > $L/panel-summary.txt
cp $T $L/; tar czf $O/logs.tgz -C $O l && rm -rf $L
