#!/usr/bin/env bash
# Device call 1 (issue 33), from the repository root on the H200: build the cuda preset, then at once
#   - selftest over 20 seeds on the GPU kernels: every mutant of the catalog (the new output_offset,
#     expert_gain_2pct and sparse_token_gain included) caught on every live case, no false alarm, with the offset,
#     token_gain and slot-regression expert statistics;
#   - the independent panel (kernels/panel) over the whole nightly suite, seed 0: the four NumPy members (three
#     shards each, one CPU thread each) and the torch member with its fp8 GEMMs on the H200's fp8 matrix units.
# Everything lands in $OUT: times.txt, and the logs and JSON in logs.tgz.
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$O/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
B=build/cuda/harness/moe-harness
left() { echo $(( ${BUDGET:-560} - (SECONDS - start) )); }
step() {  # name, command...: timed, its exit and seconds in times.txt
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 20 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
step selftest $B selftest --kernel gpu --seeds 20 --jobs 2 --job-threads 2 --json $L/selftest.json &
export PYTHONPATH=$PWD/build/cuda/python OMP_NUM_THREADS=1
for m in vllm aiter splitk finalize; do
  for s in 0 1 2; do
    step panel-$m-$s python3 kernels/panel/run_panel.py --suite nightly --members $m --shard $s/3 --verbose &
  done
done
for s in 0 1; do
  step panel-vllm-torch-$s python3 kernels/panel/run_panel.py --suite nightly --members vllm-torch --shard $s/2 --verbose &
done
wait
grep -h "^FALSE ALARM\| passed, " $L/panel-*.txt > $L/panel-summary.txt
cp $T $L/; tar czf $O/logs.tgz -C $O l && rm -rf $L
