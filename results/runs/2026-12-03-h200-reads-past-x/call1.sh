#!/usr/bin/env bash
# Device call 1 (issue 34), tree with the fix of set_fused_moe_mutant (x_rows compared): x's padding rows in
# device memory and the mutant reads_past_device_x: the GPU unit and plugin tests, then the GPU selftest over 20 seeds
# (every step interrupted at the call's deadline); the Python module built too, for call 2.
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$L/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness gpu_kernel_tests gpu_plugin_tests moe_python_package; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
left() { echo $(( ${BUDGET:-420} - (SECONDS - start) )); }
step() {
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 20 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
step gpu-unit build/cuda/harness/gpu_kernel_tests
step gpu-plugin build/cuda/kernels/gpu_plugin_tests
step selftest-gpu build/cuda/harness/moe-harness selftest --kernel gpu --seeds 20 --jobs 4 --job-threads 4 --json $L/selftest-gpu.json
cat $T
tar czf $O/logs.tgz -C $O l
