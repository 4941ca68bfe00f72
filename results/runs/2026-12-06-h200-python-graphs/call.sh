#!/usr/bin/env bash
# Device call (issue 47 item 8): the device probes on Python kernels. Builds the CLI and the Python module with the
# cuda preset, then, each step under its own time limit and its exit code logged in times.txt:
#   unit      the CPU-side tests of the device probes' Python side and the graph_safe declaration, here with CUDA;
#   examples  ci/python-examples over smoke at seeds 0-4, torch and Triton, every probe on (clean; defects at seed 0);
#   clean     test_graph_mutants_device.py -k clean: the torch example passes with stream_order and graph_replay ran,
#             smoke at seeds 0-4;
#   mutants   each graph mutant of kernels/external/torch_graph_mutants.py over smoke at seeds 0-4: caught by its
#             probe on every live case, passing elsewhere;
#   summary   every report.json: verdicts by status and each device probe's statuses (probe_summary.py).
# Total under 8 minutes on a warm machine (BUDGET seconds, default 460). Logs under $OUT/l, packed in $OUT/logs.tgz.
set -x
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p "$L"; T=$L/times.txt; : > "$T"; start=$SECONDS
R=results/runs/2026-12-06-h200-python-graphs
exec 2> "$L/trace.txt"  # set -x's trace
left() { local n=$(( ${BUDGET:-460} - (SECONDS - start) )); [ "$n" -ge 5 ] && echo "$n" || echo 5; }
step() {  # name limit_s command...: the command's output in $L/name.txt, its exit code and wall time in times.txt
  local n=$1 lim=$2 t=$SECONDS; shift 2
  [ "$lim" -le "$(left)" ] || lim=$(left)
  timeout -s INT -k 15 "$lim" "$@" > "$L/$n.txt" 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s (limit $lim s)" >> "$T"
}
nvidia-smi > "$L/nvidia-smi.txt" 2>&1
python3 -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available(), "triton", triton.__version__)' > "$L/versions.txt" 2>&1
step build 240 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package'

export PYTHONPATH="$PWD/build/cuda/python:$PWD/kernels/external" MOE_HARNESS_BIN="$PWD/build/cuda/harness/moe-harness"
PYTEST=(python3 -m pytest -q -rfE -p no:cacheprovider)
PLUGIN=("${PYTEST[@]}" -p moe_harness.pytest_plugin --moe-suite smoke --moe-device cuda --moe-require-device)

step unit 60 "${PYTEST[@]}" harness/python/tests/test_device_probes.py harness/python/tests/test_hostile_args.py -k "device or declaration"

P=$O/examples; rm -rf "$P"
step examples 200 ci/python-examples --build-dir build/cuda --suite smoke --seeds 5 --kernels torch,triton \
  --parallel 10 --deadline 180 --out "$P"
cp "$P/summary.txt" "$L/examples-summary.txt" 2>/dev/null; cp "$P/failures.txt" "$L/examples-failures.txt" 2>/dev/null

# The clean torch example and the three mutants, one pytest process per seed and test, at once.
G=$O/graphs; rm -rf "$G"; mkdir -p "$G"
graphs() {  # name seed pytest-selection...
  local n=$1 s=$2; shift 2
  timeout -s INT -k 15 "$(left)" "${PLUGIN[@]}" --moe-seed "$s" --moe-kernel-id torch-moe --moe-report "$G/$n-seed$s" \
    "$@" harness/python/tests/test_graph_mutants_device.py > "$G/$n-seed$s.log" 2>&1
  echo "$n seed $s: exit $? in $((SECONDS - start)) s: $(tail -n 1 "$G/$n-seed$s.log")" >> "$G/summary.txt"
}
t=$SECONDS
export OMP_NUM_THREADS=2
for s in 0 1 2 3 4; do
  graphs clean "$s" -k clean &
  for m in graph_baked_weights graph_stale_workspace default_stream_launch; do
    MOE_GRAPH_MUTANT=$m graphs "$m" "$s" -k caught &  # not -k mutant: the module's name matches that
    while [ "$(jobs -rp | wc -l)" -ge 10 ]; do sleep 1; done
  done
done
wait
echo "graphs: $(grep -c ': exit 0 ' "$G/summary.txt") of 20 processes exit 0, $((SECONDS - t)) s" >> "$T"
sort "$G/summary.txt" > "$L/graphs-summary.txt"
grep -hE '^(FAILED|ERROR) ' "$G"/*.log | cut -c1-600 > "$L/graphs-failures.txt"

step summary 30 python3 "$R/probe_summary.py" "$P" "$G"
cat "$T" "$L/examples-summary.txt" "$L/graphs-summary.txt" "$L/summary.txt"
tar czf "$O/logs.tgz" --exclude=triton-cache -C "$O" l examples graphs
