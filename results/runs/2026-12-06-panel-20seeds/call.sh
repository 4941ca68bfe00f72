#!/usr/bin/env bash
# Device calls for the panel's false alarms over seeds and the systematic statistics' z (issues 45, 46). PHASE:
#   a  the cuda preset built (moe-harness, the Python module), then at once: the GPU members (vllm-torch,
#      vllm-fastaccum, vllm-triton) over smoke at seeds 5-19 (0-4: results/runs/2026-12-06-h200-final), and the
#      z sweep: the NumPy members and two GPU members on nine nightly cases (T1, T4, T128; bf16, fp8 per-tensor,
#      fp8 block) at seeds 0-19, envelope always, token probes off (run_panel --jsonl, then zstats.py);
#   b  the whole nightly at its own seeds, the four NumPy members, each in 4 shards (16 processes);
#   c  the whole nightly at its own seeds, the three GPU members, each in 4 shards.
# Every process is cut at the call's budget (BUDGET s, default 575): a cut one says so in times.txt (exit 124/130).
# Logs under $OUT/<phase>.
set -x
PHASE=$1
O=${OUT:-/tmp/out}; L=$O/$PHASE; mkdir -p "$L"; T=$L/times.txt; : > "$T"; start=$SECONDS
exec 2> "$L/trace.txt"
left() { local n=$(( ${BUDGET:-575} - (SECONDS - start) )); [ "$n" -ge 5 ] && echo "$n" || echo 5; }
step() {  # name limit_s command...
  local n=$1 lim=$2 t=$SECONDS; shift 2
  [ "$lim" -le "$(left)" ] || lim=$(left)
  timeout -s INT -k 15 "$lim" "$@" > "$L/$n.txt" 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s (limit $lim s)" >> "$T"
}
nvidia-smi -L > "$L/gpu.txt" 2>&1; nproc >> "$L/gpu.txt"; git log --oneline -1 >> "$L/gpu.txt"
[ -x build/cuda/harness/moe-harness ] && [ -f build/cuda/python/moe_harness/_case.py ] ||
  step build 330 bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target moe-harness moe_python_package'
export PYTHONPATH="$PWD/build/cuda/python" MOE_HARNESS_BIN="$PWD/build/cuda/harness/moe-harness"
PANEL=(python3 kernels/panel/run_panel.py)
Z=(--filter "qwen3.5-35b-a3b/tp4/bf16.a16+sh.bf16.a16/silu/T1/decode/atomic/one_stage"
   --filter "qwen3.5-35b-a3b/tp4/bf16.a16+sh.bf16.a16/silu/T4/decode/atomic/one_stage"
   --filter "qwen3.5-35b-a3b/tp4/bf16.a16+sh.bf16.a16/silu/T128/prefill/atomic/two_stage"
   --filter "qwen3.5-35b-a3b/tp4/fp8pt.tok+sh.fp8ch.tok/silu/T1/decode/atomic"
   --filter "qwen3.5-35b-a3b/tp4/fp8pt.tok+sh.fp8ch.tok/silu/T128/prefill/atomic"
   --filter "qwen3.5-35b-a3b/tp4/fp8blk.g128+sh.fp8ch.tok/silu/T128/prefill/atomic"
   --filter "deepseek-v3/tp8/ep8r0/fp8blk.g128+sh.fp8blk.g128/silu/T1/decode/atomic"
   --filter "deepseek-v3/tp8/ep8r0/fp8blk.g128+sh.fp8blk.g128/silu/T4/decode/atomic"
   --filter "gpt-oss-20b/tp2/mxfp4.a16-rceil/swiglu_oai+bias/T4/decode/atomic")
case $PHASE in
a)
  for m in vllm-torch vllm-fastaccum vllm-triton; do
    for s in 5 10 15; do
      OMP_NUM_THREADS=1 step smoke-$m-$s $(left) "${PANEL[@]}" --suite smoke --members $m --seeds 5 --first-seed $s &
    done
  done
  for m in vllm aiter finalize splitk vllm-fastaccum vllm-triton; do
    OMP_NUM_THREADS=1 step z-$m $(left) "${PANEL[@]}" --suite nightly "${Z[@]}" --members $m --seeds 20 \
      --envelope always --no-token-probes --jsonl $L/z-$m.jsonl --quiet &
  done
  wait
  python3 results/runs/2026-12-06-panel-20seeds/zstats.py $L/z-*.jsonl > $L/zstats.md 2>&1
  for m in vllm aiter finalize splitk vllm-fastaccum vllm-triton; do
    python3 results/runs/2026-12-06-panel-20seeds/zstats.py $L/z-$m.jsonl > $L/zstats-$m.md 2>&1; done
  ;;
b|c)
  [ "$PHASE" = b ] && members="vllm aiter finalize splitk" || members="vllm-torch vllm-fastaccum vllm-triton"
  for m in $members; do
    for i in 0 1 2 3; do
      OMP_NUM_THREADS=1 step nightly-$m-$i $(left) "${PANEL[@]}" --suite nightly --members $m --shard $i/4 --verbose &
    done
  done
  wait
  ;;
esac
for f in $L/smoke-*.txt $L/nightly-*.txt $L/z-*.txt; do
  [ -f "$f" ] && echo "$(basename $f .txt): $(grep -c '^FALSE ALARM' $f) false alarms; $(tail -n 1 $f)"; done >> "$T"
grep -h "^FALSE ALARM" $L/*.txt | cut -c1-400 > $L/false-alarms.txt
cat "$T"; cat $L/zstats.md 2>/dev/null
# The device returns at most a few files: one archive of the phase's logs.
tar czf "$O/$PHASE.tgz" -C "$O" "$PHASE" && rm -rf "$L"
