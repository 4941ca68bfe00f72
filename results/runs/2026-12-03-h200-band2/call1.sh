#!/usr/bin/env bash
# Device call 1 (issues 33 and 34), tree with the requantization band at factor 2 and the token rotation on Python
# kernels: the panel member vllm-torch over the whole nightly at seed 1 (the seed of token 110's false alarm), three
# shards, and its T128/T512 cases at seeds 2-4; beside them the torch and Triton examples over the smoke suite at
# seeds 0-19 (every defect at seed 0), every probe on; first the GPU unit and plugin tests (device red zones). Each
# step is interrupted at the call's deadline.
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$L/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package gpu_kernel_tests gpu_plugin_tests; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
left() { echo $(( ${BUDGET:-560} - (SECONDS - start) )); }
step() {
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 20 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
step gpu-unit build/cuda/harness/gpu_kernel_tests; step gpu-plugin build/cuda/kernels/gpu_plugin_tests
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True OMP_NUM_THREADS=2
for s in 0 1 2; do
  PYTHONPATH=build/cuda/python step panel-seed1-$s python3 kernels/panel/run_panel.py --suite nightly \
    --members vllm-torch --first-seed 1 --shard $s/3 --verbose &
done
PYTHONPATH=build/cuda/python step panel-t128-t512-seeds2-4 python3 kernels/panel/run_panel.py --suite nightly \
  --members vllm-torch --first-seed 2 --seeds 3 --filter '*/T128/*' --filter '*/T512/*' --verbose &
P=/tmp/pe; rm -rf $P
step examples ci/python-examples --build-dir build/cuda --suite smoke --seeds 20 --kernels torch,triton --parallel 8 \
  --deadline $(( $(left) - 15 )) --out $P &
wait
cp $P/summary.txt $L/examples-summary.txt 2>/dev/null; cp $P/failures.txt $L/examples-failures.txt 2>/dev/null
for f in $L/panel-*.txt; do grep -E "FALSE ALARM|passed,|worst|seed .*:" $f > $f.short; done
cat $T
tar czf $O/logs.tgz -C $O l
