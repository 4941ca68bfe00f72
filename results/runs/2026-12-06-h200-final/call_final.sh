#!/usr/bin/env bash
# Device call after call_timing.sh (warm: the cuda build is there; else it is built first): at once
#   selftest   the GPU selftest over 20 seeds (every catalog mutant, the band explanation's included);
#   examples   ci/python-examples over smoke at seeds 0-4, torch and Triton (capturable on the device: every probe,
#              graph_replay and stream_order included; injected defects at seed 0);
#   graphs     test_graph_mutants_device.py: the clean torch example and each of the three graph mutants over smoke
#              at seeds 0-4 (caught by its probe on every live case);
# then the GPU panel members (vllm-torch, vllm-fastaccum, vllm-triton) over smoke at as many seeds as the budget
# leaves (BUDGET seconds in all, default 570). Logs under $OUT/l.
set -x
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p "$L"; T=$L/times.txt; : > "$T"; start=$SECONDS
exec 2> "$L/trace.txt"
left() { local n=$(( ${BUDGET:-570} - (SECONDS - start) )); [ "$n" -ge 5 ] && echo "$n" || echo 5; }
step() {  # name limit_s command...
  local n=$1 lim=$2 t=$SECONDS; shift 2
  [ "$lim" -le "$(left)" ] || lim=$(left)
  timeout -s INT -k 15 "$lim" "$@" > "$L/$n.txt" 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s (limit $lim s)" >> "$T"
}
nvidia-smi -L > "$L/gpu.txt" 2>&1; git log --oneline -1 >> "$L/gpu.txt"
step build 300 bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target moe-harness moe_python_package'
step selftest-gpu 330 build/cuda/harness/moe-harness selftest --kernel gpu --seeds 20 --jobs 2 --job-threads 4 --json $L/selftest-gpu.json &

export PYTHONPATH="$PWD/build/cuda/python:$PWD/kernels/external" MOE_HARNESS_BIN="$PWD/build/cuda/harness/moe-harness"
P=$O/examples; rm -rf "$P"
step examples 240 ci/python-examples --build-dir build/cuda --suite smoke --seeds 5 --kernels torch,triton \
  --parallel 4 --deadline 230 --out "$P" &

G=$O/graphs; rm -rf "$G"; mkdir -p "$G"
PLUGIN=(python3 -m pytest -q -rfE -p no:cacheprovider -p moe_harness.pytest_plugin --moe-suite smoke --moe-device cuda --moe-require-device)
graphs() {  # name seed pytest-selection...
  local n=$1 s=$2; shift 2
  OMP_NUM_THREADS=2 timeout -s INT -k 15 "$(left)" "${PLUGIN[@]}" --moe-seed "$s" --moe-kernel-id torch-moe --moe-report "$G/$n-seed$s" \
    "$@" harness/python/tests/test_graph_mutants_device.py > "$G/$n-seed$s.log" 2>&1
  echo "$n seed $s: exit $? at $((SECONDS - start)) s: $(tail -n 1 "$G/$n-seed$s.log")" >> "$G/summary.txt"
}
for s in 0 1 2 3 4; do
  graphs clean "$s" -k clean &
  for m in graph_baked_weights graph_stale_workspace default_stream_launch; do
    MOE_GRAPH_MUTANT=$m graphs "$m" "$s" -k caught &
    while [ "$(jobs -rp | wc -l)" -ge 6 ]; do sleep 1; done
  done
done
wait
echo "graphs: $(grep -c ': exit 0 ' "$G/summary.txt") of 20 processes exit 0" >> "$T"
sort "$G/summary.txt" > "$L/graphs-summary.txt"
grep -hE '^(FAILED|ERROR) ' "$G"/*.log | cut -c1-600 > "$L/graphs-failures.txt"
cp "$P/summary.txt" "$L/examples-summary.txt" 2>/dev/null; cp "$P/failures.txt" "$L/examples-failures.txt" 2>/dev/null

n=$(( $(left) / 40 )); [ "$n" -le 20 ] || n=20
if [ "$n" -ge 1 ]; then
  for m in vllm-torch vllm-fastaccum vllm-triton; do
    OMP_NUM_THREADS=5 step panel-$m $(( $(left) - 10 )) python3 kernels/panel/run_panel.py --suite smoke --members $m --seeds $n --report-dir $O/panel-$m &
  done
  wait
  for m in vllm-torch vllm-fastaccum vllm-triton; do echo "panel $m ($n seeds): $(grep -c '^FALSE ALARM' $L/panel-$m.txt) false alarms; $(tail -n 1 $L/panel-$m.txt)"; done >> "$T"
  grep -h "reason:" $L/panel-*.txt | sort | uniq -c | sort -rn | head -20 > $L/panel-reasons.txt
fi
grep -E "^selftest|MISSED|clean false" $L/selftest-gpu.txt >> "$T"
cat "$T" $L/examples-summary.txt $L/graphs-summary.txt $L/panel-reasons.txt 2>/dev/null
