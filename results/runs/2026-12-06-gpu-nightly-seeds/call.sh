#!/usr/bin/env bash
# The three GPU panel members (vllm-torch, vllm-fastaccum, vllm-triton: docs/judging.md "The independent panel")
# over the whole nightly at explicit seeds, token probes off, one process per (seed, shard of 10) with all three
# members (they share the seed's generated weights), 15 processes at once on the device's 16 cores:
#   [SELFTEST=1] [P=15] bash results/runs/2026-12-06-gpu-nightly-seeds/call.sh JOBS_FILE   (lines "SEED SHARD", 0..9)
# SELFTEST=1 first starts the GPU selftest over 20 seeds beside the jobs (selftest-gpu.txt); P jobs run at once.
# A job starts only while at least MINJOB s (default 150) of the call's BUDGET s (default 540) are left, and is cut
# at the budget (its verbose log keeps what it judged). Logs: $OUT/logs.tgz (n-SEED-SHARD.{txt,jsonl}, times.txt).
# REFCACHE=1: each job's members share the case's references and envelope (--reference-cache, a folder per job,
# removed after it; they declare one contract).
set -x
JOBS=$1
O=${OUT:-/tmp/out}; L=$O/logs; mkdir -p "$L"; T=$L/times.txt; : > "$T"
export END=$(( $(date +%s) + ${BUDGET:-540} )) L T
exec 2> "$L/trace.txt"
nvidia-smi -L > "$L/gpu.txt" 2>&1; nproc >> "$L/gpu.txt"; git log --oneline -1 >> "$L/gpu.txt"
B=build/cuda/harness/moe-harness
export PYTHONPATH="$PWD/build/cuda/python" MOE_HARNESS_BIN="$PWD/$B"
if ! [ -x $B ] || ! [ -f build/cuda/python/moe_harness/_case.py ]; then
  t=$(date +%s)
  bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target moe-harness moe_python_package' \
    > "$L/build.txt" 2>&1
  echo "build: exit $?, $(( $(date +%s) - t )) s" >> "$T"
fi
job() {  # SEED SHARD
  local tag=n-$1-$2 t=$(date +%s) lim=$(( END - $(date +%s) ))
  if [ "$lim" -lt "${MINJOB:-150}" ]; then echo "$tag: not started, $lim s left" >> "$T"; return; fi
  OMP_NUM_THREADS=1 timeout -s INT -k 15 "$lim" python3 kernels/panel/run_panel.py --suite nightly \
    --members vllm-torch,vllm-fastaccum,vllm-triton --seeds 1 --first-seed "$1" --shard "$2/10" --no-token-probes \
    ${REFCACHE:+--reference-cache "/tmp/moe-rc/$tag"} --verbose --jsonl "$L/$tag.jsonl" > "$L/$tag.txt" 2>&1
  local rc=$?; rm -rf "/tmp/moe-rc/$tag"
  echo "$tag: exit $rc, $(( $(date +%s) - t )) s (limit $lim s)" >> "$T"
}
export -f job
if [ "${SELFTEST:-0}" = 1 ]; then
  ( t=$(date +%s); timeout -s INT -k 15 $(( END - t )) $B selftest --kernel gpu --seeds 20 --jobs 2 --job-threads 4 \
      > "$L/selftest-gpu.txt" 2>&1; echo "selftest-gpu: exit $?, $(( $(date +%s) - t )) s" >> "$T" ) &
fi
xargs -P ${P:-15} -L 1 bash -c 'job "$@"' _ < "$JOBS"
wait
tar czf "$O/logs.tgz" -C "$O" logs && rm -rf "$L"
