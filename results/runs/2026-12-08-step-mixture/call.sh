#!/usr/bin/env bash
# Device calls for the maxima's step explanation (issue 45). PHASE:
#   b  build the cuda preset's CLI and Python module, then the GPU selftest over 20 seeds
#   s  smoke, the three GPU members, seeds FIRST..FIRST+N-1 (default 0, 20), one process per member
#   n  the whole nightly, the three GPU members, seed FIRST (default 0), token probes off, one process per member
#   z  the z sweep of the three GPU members on the five fp8 cases of cases.sh (the only cases of the nine of
#      results/runs/2026-12-06-maxima-z where the members declare accum=mma14 and sparse members are simulated),
#      seeds FIRST..FIRST+N-1 (env FIRST, N; default 0, 20), envelope always, token probes off; one process per
#      member and seed block of B (default 4)
# Both build the cuda preset's CLI and module first where that build is not there. Every process is cut at the
# call's budget (BUDGET s, default 540). Logs: $OUT/<phase>[-FIRST].tgz.
PHASE=$1
O=${OUT:-/tmp/out}; TAG=$PHASE${FIRST:+-$FIRST}; L=$O/$TAG; mkdir -p "$L"; T=$L/times.txt; : > "$T"; start=$SECONDS
left() { local n=$(( ${BUDGET:-540} - (SECONDS - start) )); [ "$n" -ge 5 ] && echo "$n" || echo 5; }
step() {  # name limit_s command...
  local n=$1 lim=$2 t=$SECONDS; shift 2
  [ "$lim" -le "$(left)" ] || lim=$(left)
  timeout -s INT -k 15 "$lim" "$@" > "$L/$n.txt" 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s (limit $lim s)" >> "$T"
}
nvidia-smi -L > "$L/gpu.txt" 2>&1; nproc >> "$L/gpu.txt"; git log --oneline -1 >> "$L/gpu.txt"
NEW=build/cuda/harness/moe-harness
export PYTHONPATH="$PWD/build/cuda/python" MOE_HARNESS_BIN="$PWD/$NEW"
D=results/runs/2026-12-07-sparse-ensemble  # cases.sh
build() {
  [ -x $NEW ] && [ -f build/cuda/python/moe_harness/_case.py ] ||
    step build 330 bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target moe-harness moe_python_package'
}
case $PHASE in
b)
  build
  step selftest-gpu "$(left)" $NEW selftest --kernel gpu --seeds 20 --jobs 4 --job-threads 4
  tail -n 60 $L/selftest-gpu.txt ;;
s)
  build
  for m in vllm-torch vllm-fastaccum vllm-triton; do
    OMP_NUM_THREADS=4 step smoke-$m "$(left)" python3 kernels/panel/run_panel.py --suite smoke --members $m \
      --seeds ${N:-20} --first-seed ${FIRST:-0} --jsonl $L/smoke-$m.jsonl --verbose &
  done
  wait
  for f in $L/smoke-*.txt; do echo "$(basename $f .txt): $(grep -c '^FALSE ALARM' $f) false alarms; $(tail -n 1 $f)"; done >> "$T" ;;
n)
  build
  for m in vllm-torch vllm-fastaccum vllm-triton; do
    OMP_NUM_THREADS=5 step n-$m "$(left)" python3 kernels/panel/run_panel.py --suite nightly --members $m --seeds 1 \
      --first-seed ${FIRST:-0} --no-token-probes --jsonl $L/n-$m.jsonl --verbose &
  done
  wait
  for f in $L/n-*.txt; do echo "$(basename $f .txt): $(grep -c '^FALSE ALARM' $f) false alarms; $(tail -n 1 $f)"; done >> "$T" ;;
z)
  build
  . $D/cases.sh
  first=${FIRST:-0}; n=${N:-20}
  for m in vllm-torch vllm-fastaccum vllm-triton; do
    for ((s = first; s < first + n; s += ${B:-4})); do
      OMP_NUM_THREADS=1 step z-$m-$s "$(left)" python3 kernels/panel/run_panel.py --suite nightly "${F[@]}" --members $m \
        --seeds $(( first + n - s < ${B:-4} ? first + n - s : ${B:-4} )) --first-seed $s --envelope always --no-token-probes \
        --jsonl $L/z-$m-$s.jsonl --quiet &
    done
  done
  wait
  python3 results/runs/2026-12-06-maxima-z/zstats.py $L/z-*.jsonl > $L/zstats-all.md 2>&1
  for f in $L/z-*.txt; do echo "$(basename $f .txt): $(grep -c '^FALSE ALARM' $f) false alarms; $(tail -n 1 $f)"; done >> "$T"
  cat $L/zstats-all.md ;;
esac
cat "$T"
tar czf "$O/$TAG.tgz" -C "$O" "$TAG" && rm -rf "$L"
