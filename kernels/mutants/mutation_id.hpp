// The mutant catalog's ids, in plain C++ with no includes, so device code (kernels/moe/fused_moe.hip, compiled by
// nvcc and hipcc) and host code share one list. Names, applicability and the host implementation: mutation.hpp.
#pragma once

namespace moe {

enum class Mutation : int {
  none = 0,
  gate_up_swapped,          // gate and up halves read from each other's rows (RTP-LLM: reorder applied twice)
  swiglu_chunked_split,     // SwiGLU-OAI computed on a chunked split of interleaved rows (vLLM #50728)
  swiglu_clamp_dropped,     // the SwiGLU limit not applied
  fnuz_scale_not_doubled,   // fn -> fnuz conversion reinterprets the bytes but keeps the scales
  fnuz_neg_zero_kept,       // fn -> fnuz conversion leaves 0x80 (-0 in fn, NaN in fnuz)
  last_token_unwritten,     // the last token of a non-power-of-two batch never written
  one_token_wrong_expert,   // token 0's first slot reads the next expert's weights
  router_weight_dropped,    // router weights not applied
  router_weight_twice,      // router weights applied twice
  routing_not_renormalized, // top-k weights used without renormalization
  routed_scaling_twice,     // DeepSeek routed_scaling_factor applied twice
  per_tensor_act_scale,     // per-token activation scales replaced by one per-tensor scale
  e8m0_scale_off_by_one,    // one E8M0 block scale of the first hit expert read one exponent high
  fp4_nibbles_swapped,      // e2m1 nibbles unpacked odd-first
  bf16_accumulation,        // the K reduction accumulates in bf16
  lost_atomic_update,       // a non-atomic fused reduce: one concurrent update of token 0 is lost
  shared_expert_dropped,    // the shared expert never added
  shared_clamp_when_disabled, // clamp applied in the shared expert although clamp_shared is false
  ep_sums_nonlocal,         // EP: experts of other ranks summed (through a wrapped local index)
  biases_dropped,           // expert biases ignored
  output_channel_zeroed,    // one hidden channel of the output zero for every token (a dead epilogue column)
  output_gain_3pct,         // the output 3% too large (a scale constant off, a factor applied to a share twice)
  output_gain_0p3pct,       // the output 0.3% too large
  output_truncated,         // the output rounded toward zero instead of to nearest even
  output_offset,            // every output element off by 1e-3 x the mean |output| (a bias added once too often)
  expert_gain_2pct,         // the most-used local expert's contributions 2% too large (one expert's scale off)
  sparse_token_gain,        // every 32nd token 2% too large (3% of the tokens: one tile, one sequence)
  intermediate_requant_skipped, // the stage-1 intermediate reaches stage 2 without its activation quantization
  duplicate_slot_dropped,   // a token's second slot on an expert it already holds dropped (vLLM #39593's class)
  reads_next_token_row,     // each token's output also reads the next row of x where its allocation continues
  writes_past_output,       // one element written past the output's end where its allocation continues
  masked_token_read,        // each token's output also reads its own x row when no slot of it is on this rank
  token_position_dependent, // tokens at odd positions sum their slots with a bf16 accumulator
  expert_label_dependent,   // local experts with odd labels round their slot outputs to bf16
  workspace_init_once,      // an accumulator workspace kept across calls, cleared only as far as the first call's T
  expert_partial_gain,      // the most-used local expert's contributions 10% too large on all its token-slots but the
                            // first (an error on part of an expert's rows: one tile of its sorted tokens)
  intermediate_toward_zero, // the stage-1 intermediate rounded toward zero instead of to nearest even
  channel_block_gain,       // output channels H/4 .. H/4 + H/8 - 1 1% too large (one epilogue tile of columns)
  token_orthogonal_3pct,    // token 0's output plus an error orthogonal to it of 3% of its norm
  gate_up_swapped_one_expert, // the most-used local expert's gate and up halves read from each other's rows
  offsets_32bit,            // GPU only: weight element offsets computed in 32 bits (wrap past 2^32 elements)
  graph_baked_inputs,       // GPU only: the router weights uploaded from a host copy taken when the launch was made
                            // (a graph replays the copy of the capture's values; vLLM #52383's class)
  default_stream_launch,    // GPU only: every launch on the legacy default stream, not the stream it was given
  writes_past_device_output, // GPU only: the final reduce writes the last element once more, one past the device output
  reads_past_device_x,      // GPU only: the final reduce reads the next token's x row, past T where x's allocation
                            // holds one (the probe's padding rows; vLLM #40047's class on the device)
  // Faults, not numerical bugs (fault_mutant(): outside all_mutations(), so the selftest does not run them): GPU
  // only, and live only on a case whose seed is kFaultMutantSeed, so a suite places them where it wants them
  // (ci/gpu-fault-containment puts one in the middle of the nightly).
  illegal_memory_access,    // a write through a wild device pointer: a sticky error that poisons the context
  spin_forever,             // a kernel that never returns
};

}  // namespace moe
