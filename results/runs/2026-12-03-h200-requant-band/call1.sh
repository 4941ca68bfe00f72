#!/usr/bin/env bash
# Device call 1 (issue 33): the requantization band (docs/judging.md "The requantization band") on the H200.
#   - the panel member vllm-torch (its fp8 GEMMs on the fp8 matrix units) over the whole nightly, seed 0: the 11
#     T128 prefill false alarms it had (token 17, min_cos) must be inside the band, with its per-case band counts;
#   - the GPU selftest and the host selftest over 20 seeds: every mutant still caught (or inside the envelope with
#     its reason), 0 false alarms.
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$O/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
B=build/cuda/harness/moe-harness
left() { echo $(( ${BUDGET:-560} - (SECONDS - start) )); }
step() {
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 20 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
PYTHONPATH=build/cuda/python step panel-vllm-torch python3 kernels/panel/run_panel.py --suite nightly \
  --members vllm-torch --report-dir $L/panel --verbose &
step selftest-gpu $B selftest --kernel gpu --seeds 20 --jobs 2 --job-threads 2 --json $L/selftest-gpu.json &
step selftest-host $B selftest --kernel host --seeds 20 --jobs 4 --job-threads 2 --json $L/selftest-host.json &
wait
cp $T $L/; tar czf $O/logs.tgz -C $O l && rm -rf $L
