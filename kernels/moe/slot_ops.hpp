// What one slot (a token with one of its routed or shared experts) reads and writes, shared by every kernel path:
// its expert and router weight, its stage-1 input, the activation, and where its stage-1 and stage-2 results go.
// Device code of the fused MoE kernels: included by kernels/moe/fused_moe.hip, mma_stages.hip and decode_probe.hip,
// a copy in each translation unit (internal linkage; the mutant build, kernels/mutants/fused_moe_mutants.hip,
// compiles its own).
#pragma once
#include <cstdint>
#include "kernels/moe/weight_loads.hpp"

namespace moe::gpu {
namespace {

constexpr int kThreads = 256;  // every stage kernel's block size

__device__ inline float activate(float g, float u, const FusedMoeArgs& a, bool clamp) {
  switch (a.act) {
    case Activation::silu: return g / (1.0f + expf(-g)) * u;
    case Activation::gelu_tanh: return 0.5f * g * (1.0f + tanhf(0.7978845608028654f * (g + 0.044715f * g * g * g))) * u;
    case Activation::gelu_erf: return 0.5f * g * (1.0f + erff(g * 0.7071067811865476f)) * u;
    case Activation::swiglu_oai:
      if (clamp) {
        g = fminf(g, a.limit);
        u = fmaxf(fminf(u, a.limit), -a.limit);
      }
      return (u + 1.0f) * g / (1.0f + expf(-a.alpha * g));
  }
  return 0.0f;
}

struct SlotInfo {
  bool valid;
  bool shared;
  std::int64_t token, expert;  // expert: index within its set
  float weight;
  std::int64_t slot;
};

__device__ inline SlotInfo slot_info(const FusedMoeArgs& a, std::int64_t slot) {
  const int per = a.topk + a.n_shared;
  const std::int64_t t = slot / per;
  const int j = int(slot % per);
  if (j >= a.topk) return {true, true, t, std::int64_t(j - a.topk), 1.0f, slot};
  const std::int64_t g = a.topk_ids[t * a.topk + j] - a.first_local_expert;
  return {g >= 0 && g < a.local_experts, false, t, g, a.topk_weights[t * a.topk + j], slot};
}

// Stage-1 row pair for intermediate index i in the stored layout.
__device__ inline void gate_up_rows(const FusedMoeArgs& a, std::int64_t inter, std::int64_t i, std::int64_t& g,
                                    std::int64_t& u) {
  if (a.layout == GateUpLayout::gate_up) { g = i; u = inter + i; }
  else if (a.layout == GateUpLayout::up_gate) { u = i; g = inter + i; }
  else { g = 2 * i; u = 2 * i + 1; }
}

// part + x * w; the bf16_accumulation mutant rounds the running sum to bf16 at every step.
template <class Args>
__device__ inline float accumulate(const Args& a, float part, float x, float w) {
  if (MOE_MUT(bf16_accumulation)) return __uint_as_float(std::uint32_t(to_bf16(part + x * w)) << 16);
  return part + x * w;
}

// A routed slot's input element x with the router weight on the input: x * w rounded to the input dtype.
__device__ inline float weigh_input(const FusedMoeArgs& a, const SlotInfo& s, float x) {
  return round_to(x * s.weight, a.in_type);
}

// An element x of a slot's token as its expert sees it: weigh_input when the router weight goes on the input and
// the slot is routed, else x (a shared expert sees x).
__device__ inline float weighted_input(const FusedMoeArgs& a, const SlotInfo& s, float x) {
  return (a.weight_on_input && !s.shared) ? weigh_input(a, s, x) : x;
}

// The stage-1 input element c of a slot's token (router weight on the input: weighted_input).
__device__ inline float input_at(const FusedMoeArgs& a, const SlotInfo& s, std::int64_t c) {
  if (a.xq_routed) {  // quantized activations, prepared by prepare_inputs_kernel + quantize_rows_kernel
    if (s.shared) return a.xq_shared[s.token * a.hidden + c];
    return a.xq_routed[(a.weight_on_input ? s.slot : s.token) * a.hidden + c];
  }
  return weighted_input(a, s, load(a.x, s.token * a.hidden + c, a.in_type));
}

// Eight consecutive fp32 values (16-byte aligned).
__device__ inline void load8f(const float* p, float (&z)[8]) {
  const float4 v0 = *reinterpret_cast<const float4*>(p), v1 = *reinterpret_cast<const float4*>(p + 4);
  z[0] = v0.x; z[1] = v0.y; z[2] = v0.z; z[3] = v0.w; z[4] = v1.x; z[5] = v1.y; z[6] = v1.z; z[7] = v1.w;
}

// A stage-1 result: the gate and up sums of intermediate index i (stored rows rg, ru) of a slot's expert, plus
// the biases, through the activation, rounded to the intermediate dtype.
__device__ inline float stage1_output(const FusedMoeArgs& a, const SlotInfo& s, std::int64_t rg, std::int64_t ru,
                                      float g, float u) {
  const ExpertSet& set = s.shared ? a.shared : a.routed;
  if (set.b13) {
    g += set.b13[s.expert * 2 * set.inter + rg];
    u += set.b13[s.expert * 2 * set.inter + ru];
  }
  bool clamp = set.clamp;
  if (MOE_MUT(swiglu_clamp_dropped)) clamp = false;
  return round_to(activate(g, u, a, clamp), a.mid_type);
}

// A stage-2 result: the down-projection sum y of hidden row `row` for a slot, plus the bias, times the router
// weight (unless it went on the input), reduced: added atomically into acc, or kept in the slot's row.
__device__ inline void stage2_output(const FusedMoeArgs& a, const SlotInfo& s, std::int64_t row, float y) {
  const ExpertSet& set = s.shared ? a.shared : a.routed;
  const std::int64_t h = a.hidden;
  if (set.b2) y += set.b2[s.expert * h + row];
  y *= (a.weight_on_input && !s.shared) ? 1.0f : s.weight;
  // lost_atomic_update: a non-atomic read-modify-write whose update from token 0's second slot another lane
  // overwrote (the host kernel's version of the same bug drops the same update).
  if (MOE_MUT(lost_atomic_update) && a.reduce == ReduceMode::fused_atomic && s.token == 0 &&
      s.slot % (a.topk + a.n_shared) == 1)
    return;
  if (a.reduce == ReduceMode::fused_atomic) atomicAdd(&a.acc[s.token * h + row], y);
  else a.slots[s.slot * h + row] = y;
}

}  // namespace
}  // namespace moe::gpu
