#!/usr/bin/env bash
# Fourth device call, from the repository root on the H200: build, then
#   1. on the quiet machine, the Python path against `run` on smoke once more, now that the module imports NumPy only
#      where it is used (harness/bench/python_overhead.py, 5 repeats; ../2026-12-02-h200-python-speed/fixed_costs.py);
#   2. at once: the nightly's 20 prefill cases and its 100 decode cases over 20 seeds (calibrate, --jobs 4 each),
#      with the passing expert shown being the one closest to failing (so the tables' closest run is that one's).
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$L/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
B=$PWD/build/cuda/harness/moe-harness
left() { echo $(( ${BUDGET:-570} - (SECONDS - start) )); }
step() {  # name, command...: timed, its exit and seconds in times.txt
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 20 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
export PYTHONPATH=$PWD/build/cuda/python
step python-smoke python3 harness/bench/python_overhead.py $B --suite smoke --kernel gpu --repeats 5 --json $L/python-smoke.json
step fixed-costs python3 results/runs/2026-12-02-h200-python-speed/fixed_costs.py $B --suite smoke --kernel gpu --repeats 3
step calibrate-prefill $B calibrate --suite nightly --filter '*prefill*' --kernel gpu --seeds 20 --jobs 4 \
  --job-threads 2 --json $L/calibrate-prefill.json &
step calibrate-decode $B calibrate --suite nightly --filter '*decode*' --kernel gpu --seeds 20 --jobs 4 \
  --job-threads 2 --json $L/calibrate-decode.json &
wait
for c in prefill decode; do
  python3 ci/summarize/systematic_margins.py $L/calibrate-$c.json > $L/calibrate-$c-systematic.md 2>&1
done
cp $T $O/; tar czf $O/logs.tgz -C $O l && rm -rf $L
