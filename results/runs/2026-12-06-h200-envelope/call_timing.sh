#!/usr/bin/env bash
# Device call: the nightly's wall time with the simulated envelope against the tree before it, on one machine in one
# call: this tree and main 8ca2dc0 (a git archive carried as build/baseline-8ca2dc0.tgz) built with the cuda preset,
# the nightly on the GPU kernel at 1 job and at 4 (4 threads each), baseline and envelope alternated; then
# envelope_bench (the members against the two references on the nightly's shapes). Logs and times under $OUT.
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
nvidia-smi -L > "$L/gpu.txt" 2>&1; nproc >> "$L/gpu.txt"
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf build/baseline-8ca2dc0.tgz -C /tmp/base
step build-new 200 bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target moe-harness envelope_bench'
step build-base 200 bash -c 'cd /tmp/base && cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target moe-harness'
NEW=build/cuda/harness/moe-harness; BASE=/tmp/base/build/cuda/harness/moe-harness
for j in 1 4; do
  for v in base new; do
    B=$NEW; [ $v = base ] && B=$BASE
    step nightly-$v-j$j 120 $B run --suite nightly --kernel gpu --require-device --jobs $j --job-threads 4 --report-dir $O/n-$v-j$j
  done
done
OMP_NUM_THREADS=4 step bench 90 build/cuda/reference/envelope_bench --benchmark_out=$L/envelope_bench.json --benchmark_out_format=json
for f in $L/nightly-*.txt; do echo "$f: $(tail -n 2 $f | head -n 1)"; done >> "$T"
cat "$T"
