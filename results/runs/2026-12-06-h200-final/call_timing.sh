#!/usr/bin/env bash
# Device call (run with carry build/baseline-8ca2dc0.tgz, a `git archive` of main 8ca2dc0, the tree before this
# wave): both trees built with the cuda preset at once, then alone on the machine the nightly on the GPU kernel,
# baseline and this tree alternated, at 4 jobs x 4 threads twice and at 1 job x 4 threads once; then envelope_bench.
# Logs under $OUT/l.
set -x
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p "$L"; T=$L/times.txt; : > "$T"; start=$SECONDS
exec 2> "$L/trace.txt"
left() { local n=$(( ${BUDGET:-575} - (SECONDS - start) )); [ "$n" -ge 5 ] && echo "$n" || echo 5; }
step() {  # name limit_s command...
  local n=$1 lim=$2 t=$SECONDS; shift 2
  [ "$lim" -le "$(left)" ] || lim=$(left)
  timeout -s INT -k 15 "$lim" "$@" > "$L/$n.txt" 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s (limit $lim s)" >> "$T"
}
nvidia-smi -L > "$L/gpu.txt" 2>&1; nproc >> "$L/gpu.txt"; git log --oneline -1 >> "$L/gpu.txt"
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf build/baseline-8ca2dc0.tgz -C /tmp/base && ls /tmp/base >> "$L/gpu.txt"
step build-base 330 bash -c 'cd /tmp/base && cmake --preset cuda >/dev/null && cmake --build --preset cuda -j8 --target moe-harness' &
step build-new 330 bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j8 --target moe-harness moe_python_package envelope_bench'
wait
NEW=build/cuda/harness/moe-harness; BASE=/tmp/base/build/cuda/harness/moe-harness
for r in a b; do
  for v in base new; do
    B=$NEW; [ $v = base ] && B=$BASE
    step nightly-$v-j4$r 60 $B run --suite nightly --kernel gpu --require-device --jobs 4 --job-threads 4 --report-dir $O/n-$v-j4$r
  done
done
if [ "$(left)" -ge 200 ]; then  # the one-job pair only where the budget holds both whole
  for v in base new; do
    B=$NEW; [ $v = base ] && B=$BASE
    step nightly-$v-j1 100 $B run --suite nightly --kernel gpu --require-device --jobs 1 --job-threads 4 --report-dir $O/n-$v-j1
  done
fi
[ "$(left)" -ge 30 ] && OMP_NUM_THREADS=4 step bench 30 build/cuda/reference/envelope_bench --benchmark_filter='references|envelope/' --benchmark_out=$L/envelope_bench.json --benchmark_out_format=json
for f in $L/nightly-*.txt; do echo "$(basename $f): $(tail -n 2 $f | head -n 1)"; done >> "$T"
python3 -c 'import json, sys, collections
r = json.load(open(sys.argv[1]))
c = collections.Counter((x.get("status"), (x.get("metrics") or {}).get("envelope_members")) for x in r["cases"])
print("status, envelope_members: count", dict(c))' $O/n-new-j4a/report.json > $L/envelope-members-new.txt 2>&1
rm -rf $O/n-*
cat "$T" $L/envelope-members-new.txt
