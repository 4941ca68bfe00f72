#!/usr/bin/env bash
# Issue 22 on the H200, after the example's memory fix (an expert's slice converted, not the whole tensor): the
# Triton example over seeds 0-4 of the nightly (defects on seed 0), each seed in two --moe-shard processes, and the
# torch example's seed 0 (clean and every defect) in four, fourteen pytest processes at once, each interrupted at
# the call's deadline so that what ran comes back.
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T=$O/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package; } > $O/logs/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
P=/tmp/pe; rm -rf $P; mkdir -p $P/tr $P/to
dl=$(( ${BUDGET:-540} - (SECONDS - start) ))
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
ci/python-examples --build-dir build/cuda --suite nightly --seeds 5 --kernels triton --parallel 10 --shards 2 --deadline $dl --out $P/tr > $O/logs/triton.txt 2>&1 & p1=$!
ci/python-examples --build-dir build/cuda --suite nightly --seeds 1 --kernels torch --parallel 4 --shards 4 --deadline $dl --out $P/to > $O/logs/torch.txt 2>&1 & p2=$!
( while sleep 20; do nvidia-smi --query-gpu=memory.used --format=csv,noheader >> $O/logs/gpu-mem.txt; done ) &
mon=$!
wait $p1 $p2
kill $mon
echo "examples done $((SECONDS - start)) s" >> $T
sort $P/tr/summary.txt $P/to/summary.txt >> $T
cat $P/tr/failures.txt $P/to/failures.txt > $O/failures.txt
for d in $P/*/*-seed*; do tail -c 20000 $d/pytest.log > $O/logs/$(basename $(dirname $d))-$(basename $d).log; done
tar czf $O/logs.tgz -C $O logs && rm -rf $O/logs
