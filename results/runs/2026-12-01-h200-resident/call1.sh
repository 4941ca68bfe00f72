#!/usr/bin/env bash
# Issue 23 on the H200: the GPU nightly with the base tree (57abd73, the issue's measurement) and with this tree
# (uploads kept per case, the device lock around device work only), both built and run in this call; then the GPU
# unit tests and the plugin ABI 2 device tests. From the repository root, build/base-src holding
# `git archive 57abd73 --prefix=build/base-src/`.
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T=$O/times.txt; end=$((SECONDS + ${BUDGET:-570}))
left() { echo $((end - SECONDS)); }
t0=$SECONDS
( cmake --preset cuda && cmake --build --preset cuda -j10 --target moe-harness gpu_kernel_tests gpu_plugin_tests moe_example_plugin \
    moe_example_gpu_plugin moe_example_gpu_plugin_swapped moe_python_package ) > $O/logs/build-new.log 2>&1 &
( cmake -S build/base-src -B build/base -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOE_GPU=CUDA \
    -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build/base -j6 --target moe-harness ) > $O/logs/build-base.log 2>&1 &
wait
echo "builds done $((SECONDS - t0)) s: new $(test -x build/cuda/harness/moe-harness && echo ok || echo MISSING)," \
     "base $(test -x build/base/harness/moe-harness && echo ok || echo MISSING)" >> $T
N=build/cuda/harness/moe-harness B=build/base/harness/moe-harness
timed() {  # name command...: wall time and exit status into times.txt
  local n=$1 a=$(date +%s.%N); shift
  timeout "$(left)" "$@" > $O/logs/$n.log 2>&1; local rc=$?
  echo "$n: exit $rc, $(python3 -c "import sys,time; print(f'{time.time()-float(sys.argv[1]):.1f}')" $a) s" >> $T
}
R=/tmp/r; rm -rf $R
timed base $B run --suite nightly --kernel gpu --require-device --no-timing --report-dir $R/base
for j in 1 4 8; do
  timed new-jobs$j $N run --suite nightly --kernel gpu --require-device --no-timing --jobs $j --report-dir $R/jobs$j
  timed compare-jobs$j $N compare $R/base/report.json $R/jobs$j/report.json --markdown $O/logs/compare-jobs$j.md
done
cp $R/jobs4/summary.md $O/logs/summary-jobs4.md 2>/dev/null
timed gpu-kernel-tests build/cuda/harness/gpu_kernel_tests
tail -3 $O/logs/gpu-kernel-tests.log >> $T
timed ctest-gpu ctest --test-dir build/cuda -L gpu --output-on-failure
tail -4 $O/logs/ctest-gpu.log >> $T
tar czf $O/logs.tgz -C $O logs && rm -rf $O/logs
