#!/usr/bin/env bash
# First device call (issues 21 and 22), from the repository root on the H200: build the cuda preset, then at once
#   - the nightly's 20 prefill cases over 20 seeds (calibrate, --jobs 4): the systematic statistics with the
#     token-clustered standard errors, on the GPU kernels believed correct;
#   - selftest over 20 seeds on the GPU: every mutant of the catalog caught, no false alarm, with those errors;
#   - the Triton example's four injected defects on the 16 nightly cases a deadline kept them from on 2026-12-01
#     (../2026-12-01-h200-examples/call3-triton-defects-not-reached.txt), seed 0, four pytest processes.
# Everything lands in $OUT: times.txt, and the logs and JSON in logs.tgz.
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$O/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
B=build/cuda/harness/moe-harness
left() { echo $(( ${BUDGET:-570} - (SECONDS - start) )); }
step() {  # name, command...: timed, its exit and seconds in times.txt
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 20 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
step calibrate-prefill env OMP_NUM_THREADS=2 $B calibrate --suite nightly --filter '*prefill*' --kernel gpu --seeds 20 \
  --jobs 4 --job-threads 2 --json $L/calibrate-prefill.json &
step selftest $B selftest --kernel gpu --seeds 20 --jobs 2 --job-threads 2 --json $L/selftest.json &
export PYTHONPATH=$PWD/build/cuda/python:$PWD/kernels/external MOE_EXAMPLE_DEVICE=cuda MOE_EXAMPLE_KERNEL=triton
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True OMP_NUM_THREADS=1
mapfile -t cases < results/runs/2026-12-01-h200-examples/call3-triton-defects-not-reached.txt
for i in 0 1 2 3; do
  f=(); for ((j = i; j < ${#cases[@]}; j += 4)); do f+=(--moe-filter "${cases[j]}"); done
  TRITON_CACHE_DIR=/tmp/tc$i step triton-defects-$i python3 -m pytest -q -rfE -p no:cacheprovider \
    -p moe_harness.pytest_plugin --moe-suite nightly --moe-seed 0 --moe-device cuda --moe-require-device \
    --moe-kernel-id triton-moe "${f[@]}" -k test_injected_bugs_fail -s harness/python/tests/test_examples_device.py &
done
wait
python3 ci/summarize/systematic_margins.py $L/calibrate-prefill.json > $L/calibrate-prefill-systematic.md 2>&1
cp $T $L/; tar czf $O/logs.tgz -C $O l && rm -rf $L
