#!/usr/bin/env bash
# Device call: after the device probes were limited to kernels declaring graph_safe and the examples made
# non-capturable by default: the GPU panel members (vllm-torch, and vllm-fastaccum / vllm-triton declaring
# accum=mma14) over smoke at seeds 0-1, and the torch and Triton examples over smoke at seeds 1-2, all at once.
set -x
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p "$L"; T=$L/times.txt; : > "$T"; start=$SECONDS
exec 2> "$L/trace.txt"
left() { local n=$(( ${BUDGET:-420} - (SECONDS - start) )); [ "$n" -ge 5 ] && echo "$n" || echo 5; }
step() {  # name limit_s command...
  local n=$1 lim=$2 t=$SECONDS; shift 2
  [ "$lim" -le "$(left)" ] || lim=$(left)
  timeout -s INT -k 15 "$lim" "$@" > "$L/$n.txt" 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s (limit $lim s)" >> "$T"
}
nvidia-smi -L > "$L/gpu.txt" 2>&1
step build 300 bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target moe-harness moe_python_package'
export PYTHONPATH=$PWD/build/cuda/python:$PWD/kernels/external OMP_NUM_THREADS=2 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
step examples 120 ci/python-examples --build-dir build/cuda --suite smoke --seeds 2 --first-seed 1 --kernels torch,triton \
  --parallel 4 --deadline 110 --out $O/examples &
for m in vllm-fastaccum vllm-triton vllm-torch; do
  step panel-$m 120 python3 kernels/panel/run_panel.py --suite smoke --members $m --seeds 2 --report-dir $L/reports-$m &
done
wait
cp $O/examples/summary.txt $L/examples-summary.txt 2>/dev/null; cp $O/examples/failures.txt $L/examples-failures.txt 2>/dev/null
for m in vllm-fastaccum vllm-triton vllm-torch; do echo "$m: $(grep -c '^FALSE ALARM' $L/panel-$m.txt) false alarms; $(tail -n 1 $L/panel-$m.txt)"; done > $L/panel-summary.txt
grep -h "reason:" $L/panel-*.txt | sort | uniq -c | sort -rn | head -20 > $L/panel-reasons.txt
cat "$T" $L/panel-summary.txt $L/panel-reasons.txt $L/examples-summary.txt
