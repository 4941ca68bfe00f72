// Launch interface of the BF16/FP16 fused MoE kernels (kernels/moe/fused_moe.hip), in plain types so the host-side
// adapter compiles without a GPU header. Every offset into a buffer that can pass 2^31 elements is 64-bit.
#pragma once
#include <cstdint>

namespace moe::gpu {

enum class ElemType : int { bf16 = 0, f16 = 1, f32 = 2 };
enum class ActKind : int { silu = 0, gelu_tanh = 1, gelu_erf = 2, swiglu_oai = 3 };
enum class LayoutKind : int { gate_up = 0, up_gate = 1, interleaved = 2 };
enum class ReduceKind : int { fused_atomic = 0, separate = 1, per_k = 2 };

// One expert set (routed or shared): [count, 2*inter, hidden] and [count, hidden, inter] in `wtype`.
struct ExpertSet {
  const void* w13 = nullptr;
  const void* w2 = nullptr;
  const float* b13 = nullptr;  // [count, 2*inter] or null
  const float* b2 = nullptr;   // [count, hidden] or null
  std::int64_t inter = 0;
  bool clamp = true;           // SwiGLU-OAI limit applied
};

struct FusedMoeArgs {
  std::int64_t tokens = 0, hidden = 0;
  int topk = 0, n_shared = 0;
  std::int64_t first_local_expert = 0, local_experts = 0;
  ElemType in_type = ElemType::bf16, w_type = ElemType::bf16, mid_type = ElemType::bf16, out_type = ElemType::bf16;
  ActKind act = ActKind::silu;
  LayoutKind layout = LayoutKind::gate_up;
  float alpha = 1.702f, limit = 7.0f;
  bool weight_on_input = false;
  ExpertSet routed, shared;
  const void* x = nullptr;               // [T, H] in_type
  const std::int32_t* topk_ids = nullptr;  // [T, k] global ids
  const float* topk_weights = nullptr;     // [T, k]
  // Work buffers owned by the caller:
  float* mid = nullptr;     // [T * (k + n_shared), max inter] stage-1 output (two-stage path)
  float* slots = nullptr;   // [T * (k + n_shared), H] per-slot results (separate / per_k)
  float* acc = nullptr;     // [T, H] fp32 accumulation (fused_atomic)
  void* out = nullptr;      // [T, H] out_type
  ReduceKind reduce = ReduceKind::fused_atomic;
  bool one_stage = false;
  bool fail_launch_for_test = false;  // test hook: an invalid launch configuration, to prove errors are reported
};

// Enqueues the whole MoE on the default stream; checks the last error after every launch (throws moe::Error).
// per_k leaves the per-slot results in `slots` for the caller to sum in k order and does not write `out`.
void launch_fused_moe(const FusedMoeArgs& a);

}  // namespace moe::gpu
