#!/usr/bin/env bash
# One device call (issues 33 and 34): the device probes (stream_order, graph_replay) and the call sequences on the
# GPU kernels, all at once after the build:
#   - gpu_kernel_tests (every unit case passes with the probes on; each probe catches its mutant), gpu_plugin_tests
#     (the example device plugin passes them; its default-stream build fails stream_order);
#   - the nightly on the GPU kernel twice, one after the other: with every probe, then --no-token-probes (the wall
#     time ratio: issue 34 allows +25 %), then the call sequences (scripted, shuffled, and the workspace_init_once
#     mutant, which must fail the steps computed by hand in cases/sequence.yaml);
#   - the GPU selftest over 20 seeds (0 false alarms; every mutant caught where live, the device probes' included);
#   - the panel member vllm-torch over the nightly's T128 and T512 cases, seeds 0-2.
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$L/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package gpu_kernel_tests gpu_plugin_tests; } \
  > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
B=build/cuda/harness/moe-harness
left() { echo $(( ${BUDGET:-560} - (SECONDS - start) )); }
step() {
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 20 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
{ step nightly-probes $B run --suite nightly --kernel gpu --require-device --report-dir $L/n1
  step nightly-no-probes $B run --suite nightly --kernel gpu --require-device --no-token-probes --report-dir $L/n0
  step sequence $B run --suite sequence --kernel gpu --require-device --report-dir $L/s1
  step sequence-shuffled $B run --suite sequence-shuffled --kernel gpu --require-device --report-dir $L/s2
  step sequence-mutant $B run --suite sequence --kernel gpu-fused-moe~workspace_init_once --require-device --report-dir $L/s3; } &
step selftest-gpu $B selftest --kernel gpu --seeds 20 --jobs 2 --job-threads 2 --json $L/selftest-gpu.json &
{ step gpu-unit build/cuda/harness/gpu_kernel_tests; step gpu-plugin build/cuda/kernels/gpu_plugin_tests; } &
PYTHONPATH=build/cuda/python step panel-vllm-torch python3 kernels/panel/run_panel.py --suite nightly \
  --members vllm-torch --seeds 3 --filter '*/T128/*' --filter '*/T512/*' --report-dir $L/panel &
wait
for n in n1 n0 s1 s2 s3; do cp $L/$n/summary.md $L/$n-summary.md 2>/dev/null; cp $L/$n/report.json $L/$n-report.json 2>/dev/null; rm -rf $L/$n; done
find $L/panel -name report.json -size +2M -delete 2>/dev/null
cat $T
