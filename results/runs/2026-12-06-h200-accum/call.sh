#!/usr/bin/env bash
# Device call (issue 45 item 3), from the repository root on the H200: build the Python module, then
#   - measure_accum.py: the fp8 matrix units' accumulation (torch._scaled_mm with and without use_fast_accum, the
#     panel's Triton tl.dot) and a bf16 GEMM against fp64, K = 128 / 512 / 2048 / 7168, with the fitted N;
#   - the two GPU panel members that declare accum=mmaN (vllm-fastaccum, vllm-triton) over smoke at seeds 0 and 1,
#     two shards per member, beside vllm-torch (precise accumulation) at the same seeds as the baseline.
# Every step is timed and interrupted at the call's deadline (BUDGET, default 280 s); logs and JSON in $OUT/logs.tgz.
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$L/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe_python_package; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
left() { echo $(( ${BUDGET:-280} - (SECONDS - start) )); }
step() {  # name, command...: timed, its exit and seconds in times.txt
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 10 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
export PYTHONPATH=$PWD/build/cuda/python OMP_NUM_THREADS=2 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
step measure python3 results/runs/2026-12-06-h200-accum/measure_accum.py --json $L/accum.json &
for m in vllm-fastaccum vllm-triton vllm-torch; do
  for s in 0 1; do
    step panel-$m-shard$s python3 kernels/panel/run_panel.py --suite smoke --members $m --seeds 2 --shard $s/2 \
      --report-dir $L/reports --verbose &
  done
done
wait
grep -h "^FALSE ALARM\| passed, \|^panel-" $L/panel-*.txt > $L/panel-summary.txt
cat $T $L/measure.txt $L/panel-summary.txt
tar czf $O/logs.tgz -C $O l
