#!/usr/bin/env bash
# Device call 3 (issues 34 and 33), after the token probes and routing edges landed, all at once after the build:
#   - the nightly on the GPU kernel with the token probes on (every case: 0 false alarms, each probe's status);
#   - the GPU selftest over 20 seeds (the routing edge cases judged on the GPU: 0 false alarms; the probe mutants
#     are host-only) and the GPU unit tests;
#   - the panel member vllm-torch (its fp8 GEMMs on the fp8 units, through case.run: the token probes on a Python
#     kernel) over the nightly's T128 and T512 cases, seeds 0-2 (the requantization band's counts over seeds).
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$O/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package gpu_kernel_tests; } \
  > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
B=build/cuda/harness/moe-harness
left() { echo $(( ${BUDGET:-560} - (SECONDS - start) )); }
step() {
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 20 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
step nightly-probes $B run --suite nightly --kernel gpu --require-device --report-dir $L/n1 &
step selftest-gpu $B selftest --kernel gpu --seeds 20 --jobs 2 --job-threads 2 --json $L/selftest-gpu.json &
step gpu-unit build/cuda/harness/gpu_kernel_tests &
PYTHONPATH=build/cuda/python step panel-vllm-torch python3 kernels/panel/run_panel.py --suite nightly \
  --members vllm-torch --seeds 3 --filter '*/T128/*' --filter '*/T512/*' --report-dir $L/panel &
wait
cp $L/n1/summary.md $L/n1-summary.md 2>/dev/null; cp $L/n1/report.json $L/n1-report.json 2>/dev/null
cp $T $L/; tar czf $O/logs.tgz --exclude='l/n1/*' -C $O l && rm -rf $L
