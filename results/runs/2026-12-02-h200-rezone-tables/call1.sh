#!/usr/bin/env bash
# Device call 1 (issues 36 and 37): after the re-zoning, and with the GPU mutant state passed beside the kernels'
# arguments (constant memory) instead of inside FusedMoeArgs, build the cuda preset, then
#   - the committed H200 table as the nightly deploys it (cases/tables/), run row by row through the dispatch
#     lookup, alone on the GPU since its rows are timed: check-table --run nightly --require-device (issue 37);
#   - then at once the GPU selftest over 20 seeds (every in-kernel mutant through the new MutantLaunch path; 0
#     false alarms) and the GPU unit tests (gpu_kernel_tests: the kernels through the pipeline, the launch-error hook).
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$O/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness gpu_kernel_tests; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
B=build/cuda/harness/moe-harness
left() { echo $(( ${BUDGET:-560} - (SECONDS - start) )); }
step() {
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 20 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
# The table's rows are timed: alone on the GPU first.
step table-run $B check-table cases/tables/h200-sm_90-132-nightly-decode.csv --run nightly --kernel gpu \
  --require-device
step selftest $B selftest --kernel gpu --seeds 20 --jobs 2 --job-threads 2 --json $L/selftest.json &
step gpu-unit build/cuda/harness/gpu_kernel_tests &
wait
cp $T $L/; tar czf $O/logs.tgz -C $O l && rm -rf $L
