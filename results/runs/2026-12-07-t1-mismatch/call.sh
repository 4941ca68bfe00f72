#!/usr/bin/env bash
# One device call: the cuda build, then capture.py over seeds 0-19 (four processes) beside the GPU selftest over 20
# seeds and the GPU panel members' nightly jobs of JOBS_FILE (results/runs/2026-12-06-gpu-nightly-seeds/call.sh):
#   [SELFTEST=0] BUDGET=480 P=4 bash results/runs/2026-12-07-t1-mismatch/call.sh JOBS_FILE     (SELFTEST=0: no selftest)
# Logs: $OUT/capture/ (capture.py's files, capture-*.txt) and call.sh's $OUT/logs.tgz.
O=${OUT:-/tmp/out}; C=$O/capture; mkdir -p "$C"
t0=$(date +%s)
if ! [ -x build/cuda/harness/moe-harness ] || ! [ -f build/cuda/python/moe_harness/_case.py ]; then
  bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target moe-harness moe_python_package' \
    > "$C/build.txt" 2>&1
  echo "build: exit $?, $(( $(date +%s) - t0 )) s" >> "$C/times.txt"
fi
export PYTHONPATH="$PWD/build/cuda/python" MOE_HARNESS_BIN="$PWD/build/cuda/harness/moe-harness"
left=$(( ${BUDGET:-575} - ($(date +%s) - t0) ))
for s in "10 0 4 8 12" "1 5 9 13 17" "2 6 14 18 16" "3 7 11 15 19"; do
  ( t=$(date +%s); OMP_NUM_THREADS=1 timeout -s INT -k 10 $(( left - 5 )) python3 results/runs/2026-12-07-t1-mismatch/capture.py \
      "$C" $s > "$C/capture-${s%% *}.txt" 2>&1; echo "capture $s: exit $?, $(( $(date +%s) - t )) s" >> "$C/times.txt" ) &
done
BUDGET=$(( left - 5 )) SELFTEST=${SELFTEST:-1} MINJOB=${MINJOB:-140} P=${P:-6} bash results/runs/2026-12-06-gpu-nightly-seeds/call.sh "$1"
wait
