// Named points inside the host contract kernel where a variant of it may change one step of its arithmetic. Every
// default is the contract's own step, so the kernel built with the plain HostKernelHooks is the correct kernel; a
// variant overrides one point (the selftest's kernels with a known bug, docs/judging.md). Each point is asked once
// per row, expert or slot, never per element, so the correct kernel pays one virtual call there.
#pragma once
#include <cstdint>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "reference/routing/routing.hpp"

namespace moe {

// The host kernel's gated activation of one stage-1 output pair: the case's formula, where its layout puts gate and
// up, and whether the SwiGLU-OAI limit is applied.
struct GateParams {
  Activation kind;
  GateUpLayout layout;
  float alpha, limit;
  bool clamp;
  IntermediateDtype gate_round;  // the act_gate point: act(g) rounded before it multiplies u (f32: not rounded)
};

struct HostKernelHooks {
  virtual ~HostKernelHooks() = default;
  // Once per run, before any work: what a variant needs to know of the case (it is not called concurrently).
  virtual void begin_run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing) {}
  // accumulate_dtype: whether the K reductions round their running sum to bf16 after every add (contract: fp32).
  virtual bool accumulate_in_bf16() const { return false; }
  // scale_index: the E8M0 scale codes the kernel decodes row `row` of expert `expert`'s w13 (is13) or w2 with;
  // `stored` holds n codes as stored, `scratch` room for n more. Returns the codes to use (contract: `stored`).
  virtual const std::uint8_t* e8m0_row_scales(const std::uint8_t* stored, std::int64_t n, bool is13,
                                              std::int64_t expert, std::int64_t row, std::uint8_t* scratch) const {
    return stored;
  }
  // nibble_order: which nibble of an e2m1x2 byte the kernel reads as the even element, 0 low or 1 high (contract: 0).
  virtual int e2m1_even_nibble() const { return 0; }
  // activation_scale: one scale forced on every routed input's fp8 per-token quantization, 0 for each token's own
  // (contract: 0).
  virtual float forced_token_scale() const { return 0.0f; }
  // intermediate_quantization: whether the rounded intermediate is quantized with the scheme's activation format
  // before stage 2 (contract: yes, where the scheme quantizes activations).
  virtual bool quantize_intermediate() const { return true; }
  // activation: the stage-1 activation's parameters for a routed or a shared expert (its local or shared index
  // `expert`) (contract: as given).
  virtual void activation(GateParams& ap, bool shared, std::int64_t expert) const {}
  // intermediate_rounding: the stage-1 intermediate element v as stage 2 reads it, given the contract's rounding of v
  // to dtype d (contract: that rounding).
  virtual float intermediate_rounded(float v, IntermediateDtype d, float contract) const { return contract; }
  // slot_sum: whether token tok's routed slot j reaches the token's sum (contract: every local slot).
  virtual bool slot_summed(std::int64_t tok, std::int64_t j) const { return true; }
  // reduce_dtype: the accumulator token tok's slots are summed in (contract: the problem's reduce point).
  virtual IntermediateDtype token_reduce_dtype(std::int64_t tok, IntermediateDtype contract) const { return contract; }
  // slot_dtype: what a routed expert's (local index `expert`) slot outputs are rounded to (contract: the problem's
  // slot point; shared experts always take it).
  virtual IntermediateDtype expert_slot_dtype(std::int64_t expert, IntermediateDtype contract) const { return contract; }
};

}  // namespace moe
