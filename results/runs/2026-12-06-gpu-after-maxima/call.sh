#!/usr/bin/env bash
# Device calls after the maxima's correction (issues 45, 46). PHASE:
#   s  (carry build/baseline-8ca2dc0.tgz) both trees built with the cuda preset at once; alone on the machine the
#      nightly on the GPU kernel at 4 jobs x 4 threads, baseline and this tree alternated twice; then at once the
#      GPU selftest over 20 seeds and the three GPU panel members over smoke at seeds 0-19;
#   z  the z sweep of the three GPU members (nine nightly cases of T1 / T4 / T128, seeds 0-19, envelope always,
#      token probes off), four seed blocks per member, then zstats.py (results/runs/2026-12-06-maxima-z);
#   sz this tree built, then at once the GPU selftest, the GPU members over smoke and the z sweep (no timing).
# Every process is cut at the call's budget (BUDGET s, default 560): a cut one says so in times.txt (exit 124/130).
# The device returns a few files: one archive of the phase's logs, $OUT/<phase>.tgz.
set -x
PHASE=$1
O=${OUT:-/tmp/out}; L=$O/$PHASE; mkdir -p "$L"; T=$L/times.txt; : > "$T"; start=$SECONDS
exec 2> "$L/trace.txt"
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
PANEL=(python3 kernels/panel/run_panel.py)
GPU_MEMBERS="vllm-torch vllm-fastaccum vllm-triton"
build_new() {
  [ -x $NEW ] && [ -f build/cuda/python/moe_harness/_case.py ] ||
    step build-new 330 bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target moe-harness moe_python_package'
}
timing() {  # alone on the machine: the nightly on the GPU kernel, baseline 8ca2dc0 and this tree alternated
  local B BASE=/tmp/base/build/cuda/harness/moe-harness
  for r in a b; do
    for v in base new; do
      B=$NEW; [ $v = base ] && B=$BASE
      step nightly-$v-j4$r 60 $B run --suite nightly --kernel gpu --require-device --jobs 4 --job-threads 4 --report-dir $O/n-$v-j4$r
    done
  done
  rm -rf $O/n-*
}
selftest() { step selftest-gpu $(left) $NEW selftest --kernel gpu --seeds 20 --jobs 2 --job-threads 4; }
smoke() {
  for m in $GPU_MEMBERS; do
    for s in 0 5 10 15; do
      OMP_NUM_THREADS=1 step smoke-$m-$s $(left) "${PANEL[@]}" --suite smoke --members $m --seeds 5 --first-seed $s &
    done
  done
  wait
}
zsweep() {
  local Z=() c m s ZS=results/runs/2026-12-06-maxima-z/zstats.py
  for c in bf16.a16+sh.bf16.a16/silu/T1/decode/atomic/one_stage bf16.a16+sh.bf16.a16/silu/T4/decode/atomic/one_stage \
           bf16.a16+sh.bf16.a16/silu/T128/prefill/atomic/two_stage fp8pt.tok+sh.fp8ch.tok/silu/T1/decode/atomic \
           fp8pt.tok+sh.fp8ch.tok/silu/T128/prefill/atomic fp8blk.g128+sh.fp8ch.tok/silu/T128/prefill/atomic; do
    Z+=(--filter "qwen3.5-35b-a3b/tp4/$c"); done
  Z+=(--filter "deepseek-v3/tp8/ep8r0/fp8blk.g128+sh.fp8blk.g128/silu/T1/decode/atomic"
      --filter "deepseek-v3/tp8/ep8r0/fp8blk.g128+sh.fp8blk.g128/silu/T4/decode/atomic"
      --filter "gpt-oss-20b/tp2/mxfp4.a16-rceil/swiglu_oai+bias/T4/decode/atomic")
  for m in $GPU_MEMBERS; do
    for s in 0 5 10 15; do
      OMP_NUM_THREADS=1 step z-$m-$s $(left) "${PANEL[@]}" --suite nightly "${Z[@]}" --members $m --seeds 5 \
        --first-seed $s --envelope always --no-token-probes --jsonl $L/z-$m-$s.jsonl --quiet &
    done
  done
  wait
  python3 $ZS $L/z-*.jsonl > $L/zstats-all.md 2>&1
  for m in $GPU_MEMBERS; do python3 $ZS $L/z-$m-*.jsonl > $L/zstats-$m.md 2>&1; done
}
case $PHASE in
s)  # (carry build/baseline-8ca2dc0.tgz)
  rm -rf /tmp/base && mkdir -p /tmp/base && tar xzf build/baseline-8ca2dc0.tgz -C /tmp/base
  step build-base 330 bash -c 'cd /tmp/base && cmake --preset cuda >/dev/null && cmake --build --preset cuda -j8 --target moe-harness' &
  build_new; wait
  timing
  selftest & smoke; wait ;;
z) build_new; zsweep ;;
sz) build_new; selftest & smoke & zsweep; wait ;;
esac
for f in $L/nightly-*.txt; do [ -f "$f" ] && echo "$(basename $f .txt): $(tail -n 2 $f | head -n 1)"; done >> "$T"
for f in $L/smoke-*.txt $L/z-*.txt; do
  [ -f "$f" ] && echo "$(basename $f .txt): $(grep -c '^FALSE ALARM' $f) false alarms; $(tail -n 1 $f)"; done >> "$T"
[ -f $L/selftest-gpu.txt ] && tail -n 5 $L/selftest-gpu.txt >> "$T"
grep -h "^FALSE ALARM" $L/*.txt | cut -c1-400 > $L/false-alarms.txt
cat "$T"; cat $L/zstats-all.md 2>/dev/null | head -40
tar czf "$O/$PHASE.tgz" -C "$O" "$PHASE" && rm -rf "$L"
