# The fp8 cases of the nine of results/runs/2026-12-06-maxima-z (whose contract declares accum=mma14 for the GPU
# members and noisyX): qwen3.5 TP4 fp8 per-tensor T1 / T128, fp8 block T128; DeepSeek-V3 fp8 block T1 / T4.
F=(--filter "qwen3.5-35b-a3b/tp4/fp8pt.tok+sh.fp8ch.tok/silu/T1/decode/atomic"
   --filter "qwen3.5-35b-a3b/tp4/fp8pt.tok+sh.fp8ch.tok/silu/T128/prefill/atomic"
   --filter "qwen3.5-35b-a3b/tp4/fp8blk.g128+sh.fp8ch.tok/silu/T128/prefill/atomic"
   --filter "deepseek-v3/tp8/ep8r0/fp8blk.g128+sh.fp8blk.g128/silu/T1/decode/atomic"
   --filter "deepseek-v3/tp8/ep8r0/fp8blk.g128+sh.fp8blk.g128/silu/T4/decode/atomic")
