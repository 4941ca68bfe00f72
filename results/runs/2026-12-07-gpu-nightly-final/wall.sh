#!/usr/bin/env bash
# The nightly's wall time on the GPU kernel, baseline 8ca2dc0 (before issue 45's envelope) against this tree,
# alone on the machine, alternated twice at one job and at 4 jobs x 4 threads (issue 45 allows 1.3x); then, with
# what is left of BUDGET s (default 540), the three GPU panel members over smoke at seeds 0-19.
#   git archive --format=tar.gz -o build/baseline-8ca2dc0.tgz 8ca2dc0
#   (device, carry build/baseline-8ca2dc0.tgz) bash results/runs/2026-12-07-gpu-nightly-final/wall.sh
# Logs: $OUT/wall.tgz (times.txt: each step's exit and seconds, each nightly's summary line).
set -x
O=${OUT:-/tmp/out}; L=$O/wall; mkdir -p "$L"; T=$L/times.txt; : > "$T"; start=$SECONDS
exec 2> "$L/trace.txt"
left() { local n=$(( ${BUDGET:-540} - (SECONDS - start) )); [ "$n" -ge 5 ] && echo "$n" || echo 5; }
step() {  # name limit_s command...
  local n=$1 lim=$2 t=$SECONDS; shift 2
  [ "$lim" -le "$(left)" ] || lim=$(left)
  timeout -s INT -k 15 "$lim" "$@" > "$L/$n.txt" 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s (limit $lim s)" >> "$T"
}
nvidia-smi -L > "$L/gpu.txt" 2>&1; nproc >> "$L/gpu.txt"
NEW=build/cuda/harness/moe-harness BASE=/tmp/base/build/cuda/harness/moe-harness
export PYTHONPATH="$PWD/build/cuda/python" MOE_HARNESS_BIN="$PWD/$NEW"
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf build/baseline-8ca2dc0.tgz -C /tmp/base
step build-base 330 bash -c 'cd /tmp/base && cmake --preset cuda >/dev/null && cmake --build --preset cuda -j8 --target moe-harness' &
if ! [ -x $NEW ] || ! [ -f build/cuda/python/moe_harness/_case.py ]; then
  step build-new 330 bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j8 --target moe-harness moe_python_package'
fi
wait
for j in "1" "4 --job-threads 4"; do
  for r in a b; do
    for v in base new; do
      B=$NEW; [ $v = base ] && B=$BASE
      step nightly-$v-j${j%% *}$r 90 $B run --suite nightly --kernel gpu --require-device --jobs $j --report-dir $O/n-$v
      rm -rf $O/n-$v
    done
  done
done
for m in vllm-torch vllm-fastaccum vllm-triton; do
  for s in 0 5 10 15; do
    OMP_NUM_THREADS=1 step smoke-$m-$s $(left) python3 kernels/panel/run_panel.py --suite smoke --members $m \
      --seeds 5 --first-seed $s --jsonl $L/smoke-$m-$s.jsonl &
  done
done
wait
for f in $L/nightly-*.txt; do echo "$(basename $f .txt): $(tail -n 2 $f | head -n 1)"; done >> "$T"
cat "$T"
tar czf "$O/wall.tgz" -C "$O" wall && rm -rf "$L"
