#!/usr/bin/env bash
# Issue 22 on the H200: the plugin ABI 2 device tests (ctest -L gpu), then the Triton example under the pytest plugin
# over seeds 0-4 of the nightly (defects on seed 0) and the torch example's seed 0 (clean and every defect), six
# pytest processes at once, each interrupted at the call's deadline so that what ran comes back.
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T=$O/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness gpu_plugin_tests moe_example_plugin \
    moe_example_gpu_plugin moe_example_gpu_plugin_swapped moe_python_package; } > $O/logs/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
timeout 60 ctest --test-dir build/cuda -L gpu --output-on-failure > $O/logs/ctest-gpu.log 2>&1
echo "ctest -L gpu: exit $?, $((SECONDS - start)) s" >> $T; grep -E "tests passed|Passed|Failed" $O/logs/ctest-gpu.log >> $T
P=/tmp/pe; rm -rf $P; mkdir -p $P/tr $P/to
dl=$(( ${BUDGET:-560} - (SECONDS - start) ))
ci/python-examples --build-dir build/cuda --suite nightly --seeds 5 --kernels triton --parallel 5 --deadline $dl --out $P/tr > $O/logs/triton.txt 2>&1 &
ci/python-examples --build-dir build/cuda --suite nightly --seeds 1 --kernels torch --parallel 1 --deadline $dl --out $P/to > $O/logs/torch.txt 2>&1 &
wait
echo "examples done $((SECONDS - start)) s" >> $T
cat $P/tr/summary.txt $P/to/summary.txt >> $T
cat $P/tr/failures.txt $P/to/failures.txt > $O/failures.txt
for d in $P/*/*-seed*; do tail -c 40000 $d/pytest.log > $O/logs/$(basename $(dirname $d))-$(basename $d).log; done
tar czf $O/logs.tgz -C $O logs && rm -rf $O/logs
