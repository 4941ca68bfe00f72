#!/usr/bin/env bash
# Device call: (1) this tree and main 8ca2dc0 (git archive build/baseline-8ca2dc0.tgz) built with the cuda preset at
# once; (2) diag_stages.py on the four fp8 / mxfp4 smoke cases the torch example failed at seed 2 (where its device
# output leaves its CPU output); (3) alone on the machine, the nightly on the GPU kernel, baseline and this tree
# alternated, at 4 jobs x 4 threads twice and at 1 job x 4 threads once; (4) envelope_bench. Logs under $OUT/l.
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
rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf build/baseline-8ca2dc0.tgz -C /tmp/base
step build-base 330 bash -c 'cd /tmp/base && cmake --preset cuda >/dev/null && cmake --build --preset cuda -j8 --target moe-harness' &
step build-new 330 bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j8 --target moe-harness moe_python_package envelope_bench'
wait
R=results/runs/2026-12-06-h200-capturable
PYTHONPATH=$PWD/build/cuda/python:$PWD/kernels/external OMP_NUM_THREADS=16 step diag 60 python3 $R/diag_stages.py --seed 2 \
  --filter '*fp8pt.tok/silu/T12/decode/atomic' --filter '*q224/silu/T4/decode/atomic' --filter '*mxfp4.tok-rceil/swiglu_oai/T6*'
NEW=build/cuda/harness/moe-harness; BASE=/tmp/base/build/cuda/harness/moe-harness
for r in a b; do
  for v in base new; do
    B=$NEW; [ $v = base ] && B=$BASE
    step nightly-$v-j4$r 60 $B run --suite nightly --kernel gpu --require-device --jobs 4 --job-threads 4 --report-dir $O/n-$v-j4$r
  done
done
for v in base new; do
  B=$NEW; [ $v = base ] && B=$BASE
  step nightly-$v-j1 110 $B run --suite nightly --kernel gpu --require-device --jobs 1 --job-threads 4 --report-dir $O/n-$v-j1
done
OMP_NUM_THREADS=4 step bench 40 build/cuda/reference/envelope_bench --benchmark_min_time=0.3 --benchmark_out=$L/envelope_bench.json --benchmark_out_format=json
for f in $L/nightly-*.txt; do echo "$(basename $f): $(tail -n 2 $f | head -n 1)"; done >> "$T"
cat "$T" $L/diag.txt
