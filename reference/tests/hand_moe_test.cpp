// Two experts, H = 4, I = 2, one token routed to both with weights 0.75 / 0.25: every value below was computed by
// hand (integer weights, x = [1, 2, 0, -1], silu by calculator) and is written here, not produced by the code.
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures/checkpoint.hpp"
#include "formats/bf16.hpp"
#include "reference/moe/reference_moe.hpp"
#include "reference/naive/naive_moe.hpp"

namespace moe {
namespace {

struct Tiny {
  ProblemSpec spec;
  Checkpoint ckpt;
};

Tiny make(GateUpLayout layout) {
  Tiny t;
  ProblemSpec& s = t.spec;
  s.hidden = 4; s.inter = 2; s.experts = 2; s.topk = 2; s.tokens = 1;
  s.routing.kind = RoutingKind::precomputed;
  s.layout = layout;
  s.intermediate = IntermediateDtype::f32;
  s.output_dtype = DType::f32;
  Checkpoint& c = t.ckpt;
  c.x = Tensor("x", DType::bf16, {1, 4});
  const float x[4] = {1, 2, 0, -1};
  for (int i = 0; i < 4; ++i) c.x.span<std::uint16_t>()[i] = bf16_from_f32(x[i]);
  c.router_logits = Tensor("router_logits", DType::f32, {1, 2});
  c.topk_ids = Tensor("topk_ids", DType::i32, {1, 2});
  c.topk_weights = Tensor("topk_weights", DType::f32, {1, 2});
  c.topk_ids.span<std::int32_t>()[0] = 0; c.topk_ids.span<std::int32_t>()[1] = 1;
  c.topk_weights.span<float>()[0] = 0.75f; c.topk_weights.span<float>()[1] = 0.25f;
  c.routed = allocate_experts(s.quant, 2, 4, 2, false, "");
  const float e0_13[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, -1, 1, 1, 0, 0};
  const float e0_2[8] = {1, 0, 0, 1, 1, 1, 0, 0};
  const float e1_13[16] = {0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0};
  const float e1_2[8] = {1, 1, 0, 0, 0, 2, 1, 0};
  quantize_expert_into(c.routed, s.quant, 0, e0_13, e0_2, 4, 2);
  quantize_expert_into(c.routed, s.quant, 1, e1_13, e1_2, 4, 2);
  return t;
}

void expect_out(const Tiny& t, const double (&want)[4]) {
  const auto r = route(t.spec, t.ckpt);
  for (auto prec : {Precision::fp32, Precision::fp64}) {
    const auto out = reference_moe(t.spec, t.ckpt, r, ReferenceKind::contract, prec);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[i], want[i], 1e-6) << "column " << i;
  }
  const auto nv = naive::moe(t.spec, t.ckpt, naive::route(t.spec, t.ckpt), true);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(nv[i], want[i], 1e-6) << "naive column " << i;
}

}  // namespace

TEST(HandMoe, TwoExpertsGateUp) { expect_out(make(GateUpLayout::gate_up), {0.4138232233, 3.963586851, 4.242939364, 0}); }

TEST(HandMoe, TwoExpertsUpGate) { expect_out(make(GateUpLayout::up_gate), {0.107895395, 4.286583571, 3.954080427, 0}); }

TEST(HandMoe, RouterWeightOnInputDiffersFromOutputForNonlinearExperts) {
  Tiny t = make(GateUpLayout::gate_up);
  const auto r = route(t.spec, t.ckpt);
  const auto on_out = reference_moe(t.spec, t.ckpt, r, ReferenceKind::contract);
  t.spec.router_weight_on = RouterWeightOn::input;
  const auto on_in = reference_moe(t.spec, t.ckpt, r, ReferenceKind::contract);
  EXPECT_GT(std::fabs(on_out[1] - on_in[1]), 0.1);
}

}  // namespace moe
