#!/usr/bin/env bash
# Device call 2 (issue 34), on call 1's build: the torch and Triton examples judged clean over the whole nightly at
# seeds F..F+N-1 (F=${FIRST:-5}, N=${SEEDS:-8}; seeds 0-4 ran in ../2026-12-01-h200-examples), every probe on, one
# pytest process per kernel and seed, every process interrupted at the call's deadline.
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$L/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
P=/tmp/pe; rm -rf $P
ci/python-examples --build-dir build/cuda --suite nightly --first-seed ${FIRST:-5} --seeds ${SEEDS:-8} \
  --kernels torch,triton --parallel 16 --deadline $(( ${BUDGET:-540} - (SECONDS - start) )) --out $P > $L/examples.txt 2>&1
echo "examples: exit $?, $((SECONDS - start)) s" >> $T
cp $P/summary.txt $L/examples-summary.txt; cp $P/failures.txt $L/examples-failures.txt
for d in $P/*-seed*; do grep -E "passed|failed|FALSE|Error" $d/pytest.log | tail -n 5 > $L/$(basename $d).tail; done
cat $T $L/examples-summary.txt
tar czf $O/logs.tgz -C $O l
