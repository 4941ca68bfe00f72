#!/usr/bin/env bash
# Third device call, from the repository root on the H200: build, then
#   1. on the quiet machine, where the Python path's fixed per-process cost goes against `run`'s
#      (../2026-12-02-h200-python-speed/fixed_costs.py, smoke, the GPU kernel, 3 repeats);
#   2. at once: the nightly's 9 bf16 prefill cases over seeds 1-5 with the matrix-instruction kernels (default) and
#      with the fp32-FMA ones (--dispatch grouped_mma=off), each case's signed systematic z and effect
#      (signed_systematic.py); the nightly's 100 decode cases over 20 seeds (calibrate, --jobs 4) with the
#      token-clustered standard errors.
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$L/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
B=$PWD/build/cuda/harness/moe-harness R=results/runs/2026-12-02-h200-clustered-se
left() { echo $(( ${BUDGET:-570} - (SECONDS - start) )); }
t=$SECONDS; PYTHONPATH=build/cuda/python timeout 90 python3 results/runs/2026-12-02-h200-python-speed/fixed_costs.py $B \
  --suite smoke --kernel gpu --repeats 3 > $L/fixed-costs.txt 2>&1
echo "fixed-costs: exit $?, $((SECONDS - t)) s" >> $T
(
  t=$SECONDS; args=()
  for s in 1 2 3 4 5; do
    for m in mma fma; do
      d=/tmp/pf-$m-$s; [ $m = fma ] && x=(--dispatch grouped_mma=off) || x=()
      timeout "$(left)" $B run --suite nightly --filter '*/bf16.a16*/prefill/*' --kernel gpu --seed $s --no-timing \
        --jobs 2 --job-threads 3 "${x[@]}" --report-dir $d > $L/prefill-$m-$s.log 2>&1
      echo "prefill $m seed $s: exit $?" >> $T
      args+=("$m/seed$s=$d/report.json")
    done
  done
  python3 $R/signed_systematic.py "${args[@]}" > $L/prefill-signed.txt 2>&1
  echo "prefill runs: $((SECONDS - t)) s" >> $T
) &
t=$SECONDS; timeout "$(left)" $B calibrate --suite nightly --filter '*decode*' --kernel gpu --seeds 20 --jobs 4 \
  --job-threads 2 --json $L/calibrate-decode.json > $L/calibrate-decode.txt 2>&1
echo "calibrate-decode: exit $?, $((SECONDS - t)) s" >> $T
wait
python3 ci/summarize/systematic_margins.py $L/calibrate-decode.json > $L/calibrate-decode-systematic.md 2>&1
cp $T $O/; tar czf $O/logs.tgz -C $O l && rm -rf $L
