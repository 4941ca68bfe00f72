#!/usr/bin/env bash
# Device: slot_requant.py for the GPU members vllm-torch and vllm-fastaccum on the nightly's fp8 per-tensor T128
# prefill case, seeds 0-4 (one process per seed), after building the cuda preset's module and CLI.
#   bash results/runs/2026-12-07-slot-requant/call.sh      (logs: $OUT/gpu.tgz)
O=${OUT:-/tmp/out}/gpu; mkdir -p "$O"; T=$O/times.txt; : > "$T"
nvidia-smi -L > "$O/gpu.txt" 2>&1
t=$SECONDS
bash -c 'cmake --preset cuda >/dev/null && cmake --build --preset cuda -j16 --target moe-harness moe_python_package' > "$O/build.txt" 2>&1
echo "build: exit $?, $((SECONDS - t)) s" >> "$T"
export PYTHONPATH="$PWD/build/cuda/python" MOE_HARNESS_BIN="$PWD/build/cuda/harness/moe-harness" OMP_NUM_THREADS=2
C="qwen3.5-35b-a3b/tp4/fp8pt.tok+sh.fp8ch.tok/silu/T128/prefill/atomic"
t=$SECONDS
for s in 0 1 2 3 4; do
  timeout -s INT -k 10 ${RUNLIMIT:-150} python3 results/runs/2026-12-07-slot-requant/slot_requant.py "$C" $s 1 \
    vllm-torch vllm-fastaccum > "$O/fp8pt-T128-seed$s.txt" 2>&1 &
done
wait
echo "runs: $((SECONDS - t)) s" >> "$T"
tar czf "${OUT:-/tmp/out}/gpu.tgz" -C "${OUT:-/tmp/out}" gpu && rm -rf "$O"
