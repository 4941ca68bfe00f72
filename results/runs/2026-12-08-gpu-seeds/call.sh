#!/usr/bin/env bash
# Device calls for issue 45's GPU evidence at main's verdict code: call.sh PHASE... (in order, one budget). PHASE:
#   b  build the cuda preset's CLI and Python module (where not built), then the GPU selftest over 20 seeds
#   n  the whole nightly, seeds FIRST..FIRST+N-1 (default 2, 1), each started only while MINSEED s (default 240) of
#      the budget are left, token probes off: the three GPU members in ONE
#      process per seed (OMP_NUM_THREADS=16) sharing a reference cache, as they declare the same contract: each
#      case's references and envelope are computed once for the three, where one process per member computed them
#      three times (results/runs/2026-12-07-step-explain/call.sh)
# Every step is cut at the call's budget (BUDGET s, default 560). Logs: $OUT/<phases>-FIRST.tgz.
O=${OUT:-/tmp/out}; TAG=$(IFS=; echo "$*")-${FIRST:-2}; L=$O/$TAG; mkdir -p "$L"; T=$L/times.txt; : > "$T"; start=$SECONDS
left() { local n=$(( ${BUDGET:-560} - (SECONDS - start) )); [ "$n" -ge 5 ] && echo "$n" || echo 5; }
step() {  # name limit_s command...
  local n=$1 lim=$2 t=$SECONDS; shift 2
  [ "$lim" -le "$(left)" ] || lim=$(left)
  timeout -s INT -k 15 "$lim" "$@" > "$L/$n.txt" 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s (limit $lim s)" >> "$T"
}
nvidia-smi -L > "$L/gpu.txt" 2>&1; nproc >> "$L/gpu.txt"; git log --oneline -1 >> "$L/gpu.txt"
NEW=build/cuda/harness/moe-harness
export PYTHONPATH="$PWD/build/cuda/python" MOE_HARNESS_BIN="$PWD/$NEW"
[ -x $NEW ] && [ -f build/cuda/python/moe_harness/_case.py ] ||
  step build 330 bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target moe-harness moe_python_package'
for PHASE in "$@"; do
case $PHASE in
b)
  step selftest-gpu "$(left)" $NEW selftest --kernel gpu --seeds 20 --jobs 4 --job-threads 4
  tail -n 60 $L/selftest-gpu.txt ;;
n)
  first=${FIRST:-2}
  for ((s = first; s < first + ${N:-1}; s++)); do
    [ "$(left)" -ge "${MINSEED:-240}" ] || { echo "n-$s: not started, $(left) s left" >> "$T"; break; }
    OMP_NUM_THREADS=16 step n-$s "$(left)" python3 kernels/panel/run_panel.py --suite nightly \
      --members vllm-torch,vllm-fastaccum,vllm-triton --seeds 1 --first-seed $s --no-token-probes \
      --reference-cache /tmp/refcache-n-$s --jsonl $L/n-$s.jsonl --verbose
    rm -rf /tmp/refcache-n-$s
    echo "n-$s: $(grep -c '^FALSE ALARM' $L/n-$s.txt) false alarms; $(grep -c '^pass ' $L/n-$s.txt) pass lines; $(tail -n 1 $L/n-$s.txt)" >> "$T"
  done ;;
*) echo "call.sh: unknown phase $PHASE" >> "$T" ;;
esac
done
cat "$T"
tar czf "$O/$TAG.tgz" -C "$O" "$TAG" && rm -rf "$L"
