#!/usr/bin/env bash
# Device call: build the CLI and the Python module (cuda preset); then at once: the capturable-layer probe
# (probe_capturable.py, smoke seeds 1-2, device and CPU) and the GPU selftest over 20 seeds. Logs under $OUT/l.
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
R=results/runs/2026-12-06-h200-capturable
PYTHONPATH=$PWD/build/cuda/python:$PWD/kernels/external OMP_NUM_THREADS=4 \
  step probe 200 python3 $R/probe_capturable.py --seeds 1,2 --cpu &
step selftest-gpu 300 build/cuda/harness/moe-harness selftest --kernel gpu --seeds 20 --jobs 3 --job-threads 4 --json $L/selftest-gpu.json
wait
grep -c ": fail" $L/probe.txt >> "$T"
tail -n 25 $L/selftest-gpu.txt >> "$T"
cat "$T"; grep -E "fail|differ, tokens \[[0-9]" $L/probe.txt | head -60
