#!/usr/bin/env bash
# Device call 2 (issues 33 and 34), on call 1's build: the GPU selftest over 20 seeds (the band at factor 2, the
# mutant writes_past_device_output), then, alone on the machine, the nightly without and with the token and device
# probes (the wall-time ratio, now with the device guards checked after every run).
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$L/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
B=build/cuda/harness/moe-harness
left() { echo $(( ${BUDGET:-560} - (SECONDS - start) )); }
step() {
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 20 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
step selftest-gpu $B selftest --kernel gpu --seeds 20 --jobs 4 --job-threads 4 --json $L/selftest-gpu.json
step nightly-no-probes $B run --suite nightly --kernel gpu --require-device --no-token-probes --report-dir $L/n0
step nightly-probes $B run --suite nightly --kernel gpu --require-device --report-dir $L/n1
for n in n1 n0; do cp $L/$n/summary.md $L/$n-summary.md 2>/dev/null; cp $L/$n/report.json $L/$n-report.json 2>/dev/null; rm -rf $L/$n; done
cat $T
tar czf $O/logs.tgz -C $O l
