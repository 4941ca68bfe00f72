#!/usr/bin/env bash
# Device call: after the envelope's cost cut (8 + 8 members) and the band allowance's floor, on one machine:
#   1. build the CLI and the Python module (cuda preset);
#   2. the nightly on the GPU kernel at 4 jobs x 4 threads, alone on the machine (its wall time against the same
#      card's baseline measured by call_timing.sh);
#   3. at once: the torch and Triton examples over smoke at seeds 1-4 with every probe (the seeds whose band counts
#      failed before the floor), measure_accum.py (the fp8 units' accumulation), and the GPU panel members over smoke.
set -x
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p "$L"; T=$L/times.txt; : > "$T"; start=$SECONDS
exec 2> "$L/trace.txt"
left() { local n=$(( ${BUDGET:-560} - (SECONDS - start) )); [ "$n" -ge 5 ] && echo "$n" || echo 5; }
step() {  # name limit_s command...
  local n=$1 lim=$2 t=$SECONDS; shift 2
  [ "$lim" -le "$(left)" ] || lim=$(left)
  timeout -s INT -k 15 "$lim" "$@" > "$L/$n.txt" 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s (limit $lim s)" >> "$T"
}
nvidia-smi -L > "$L/gpu.txt" 2>&1
step build 330 bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target moe-harness moe_python_package'
step nightly-new-j4 90 build/cuda/harness/moe-harness run --suite nightly --kernel gpu --require-device --jobs 4 --job-threads 4 --report-dir $O/n-new-j4
export PYTHONPATH=$PWD/build/cuda/python:$PWD/kernels/external OMP_NUM_THREADS=2 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
step examples 150 ci/python-examples --build-dir build/cuda --suite smoke --seeds 4 --first-seed 1 --kernels torch,triton \
  --parallel 8 --deadline 140 --out $O/examples &
step measure 120 python3 results/runs/2026-12-06-h200-accum/measure_accum.py --json $L/accum.json &
for m in vllm-fastaccum vllm-triton vllm-torch; do
  step panel-$m 150 python3 kernels/panel/run_panel.py --suite smoke --members $m --seeds 2 --report-dir $L/reports-$m &
done
wait
cp $O/examples/summary.txt $L/examples-summary.txt 2>/dev/null; cp $O/examples/failures.txt $L/examples-failures.txt 2>/dev/null
grep -h "^FALSE ALARM\| passed\|false alarm" $L/panel-*.txt > $L/panel-summary.txt
echo "nightly: $(tail -n 2 $L/nightly-new-j4.txt | head -n 1)" >> "$T"
cat "$T" $L/measure.txt $L/panel-summary.txt $L/examples-summary.txt
