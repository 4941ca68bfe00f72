// Each rounding point of the contract (fixtures/rounding_contract.hpp) by hand, on one token, two bf16 experts,
// H = 2, I = 1, router weights 0.75 / 0.25, intermediate and output f32 (so only the point under test rounds):
//   x = [1, 3/512]; each expert's gate row [32, 0] and up row [1, 1]: g = 32, u = 1 + 3/512 = 1.005859375 (exact in
//   fp32, not in bf16: its neighbours are 1 and 1.0078125, so bf16(u) = 1.0078125). silu(32) = 32 in fp32
//   (sigmoid(32) rounds to 1), so z = 32u = 32.1875, or 32.25 when h is rounded to bf16 first.
//   W2 column 0 is -3 in both experts: slots -72.421875 and -24.140625; column 1 is 1: slots 24.140625, 8.046875.
// bf16 spacing is 0.5 in [64, 128), 0.25 in [32, 64), 0.125 in [16, 32), 0.0625 in [8, 16); ties go to even.
//   default (no point):  column 0 -96.5625,  column 1 32.1875
//   gate_up=bf16:        z = 32.25: -72.5625 - 24.1875 = -96.75;  24.1875 + 8.0625 = 32.25
//   slot=bf16:           bf16(-72.421875) = -72.5, bf16(-24.140625) = -24.125: -96.625;
//                        bf16(24.140625) = 24.125, bf16(8.046875) = 8.0625: 32.1875 (the same as no rounding)
//   reduce=bf16:         bf16(-72.421875) = -72.5, then bf16(-72.5 - 24.140625 = -96.640625) = -96.5;
//                        bf16(24.140625) = 24.125, then bf16(24.125 + 8.046875 = 32.171875) = 32.25
//   gate_up=bf16,slot=bf16 (vLLM's pipeline): bf16(-72.5625) = -72.5 and bf16(-24.1875) = -24.25 (a tie: 193.5
//                        steps of 0.125 goes to 194), -96.75; bf16(24.1875) = 24.25, bf16(8.0625) = 8.0625: 32.3125
//   f16 (spacing 2^-5 in [32, 64), 2^-6 in [16, 32), 2^-7 in [8, 16)) keeps every value above: gate_up=f16 is the default's.
// act_gate, with the gate rows [1, 0] instead (g = 1; silu(1) = 1 / (1 + e^-1) = 0.7310585786300049, u as above):
//   default:        z = silu(1) u = 0.7353421249891651 (fp32: within 1e-7); column 0 -3z = -2.2060263749674953
//   act_gate=bf16:  bf16(silu(1)): 0.7310585786 = 1.4621171572 x 2^-1, 1.4621171572 x 128 = 187.15 -> 187, so
//                   187/256 = 0.73046875; z = 187/256 x 515/512 = 96305/131072 = 0.7347488403320312 (exact in fp32),
//                   column 0 -3z = -2.2042465209960938 (exact): vLLM's silu_and_mul rounds silu(g) before the multiply
#include <gtest/gtest.h>

#include "fixtures/checkpoint.hpp"
#include "fixtures/rounding_contract.hpp"
#include "formats/bf16.hpp"
#include "reference/moe/reference_moe.hpp"
#include "reference/naive/naive_moe.hpp"
#include "reference/tests/scale_form_case.hpp"

namespace moe {
namespace {

struct Tiny {
  ProblemSpec spec;
  Checkpoint ckpt;
};

Tiny make(const char* contract, float gate = 32) {
  Tiny t;
  ProblemSpec& s = t.spec;
  s.hidden = 2; s.inter = 1; s.experts = 2; s.topk = 2; s.tokens = 1;
  s.routing.kind = RoutingKind::precomputed;
  s.intermediate = IntermediateDtype::f32;
  s.output_dtype = DType::f32;
  s = with_contract(s, *parse_rounding_contract(contract).contract);
  Checkpoint& c = t.ckpt;
  c.x = Tensor("x", DType::bf16, {1, 2});
  c.x.span<std::uint16_t>()[0] = bf16_from_f32(1.0f);
  c.x.span<std::uint16_t>()[1] = bf16_from_f32(3.0f / 512.0f);
  c.router_logits = Tensor("router_logits", DType::f32, {1, 2});
  c.topk_ids = Tensor("topk_ids", DType::i32, {1, 2});
  c.topk_weights = Tensor("topk_weights", DType::f32, {1, 2});
  c.topk_ids.span<std::int32_t>()[0] = 0; c.topk_ids.span<std::int32_t>()[1] = 1;
  c.topk_weights.span<float>()[0] = 0.75f; c.topk_weights.span<float>()[1] = 0.25f;
  c.routed = allocate_experts(s.quant, 2, 2, 1, false, "");
  const float w13[4] = {gate, 0, 1, 1};  // gate row, up row
  const float w2[2] = {-3, 1};         // [H, I]
  for (int e = 0; e < 2; ++e) quantize_expert_into(c.routed, s.quant, e, w13, w2, 2, 1);
  return t;
}

void expect_out(const char* contract, double col0, double col1, float gate = 32, double tol = 1e-9) {
  const Tiny t = make(contract, gate);
  const auto r = route(t.spec, t.ckpt);
  for (auto prec : {Precision::fp32, Precision::fp64}) {
    const auto out = reference_moe(t.spec, t.ckpt, r, ReferenceKind::contract, prec);
    EXPECT_NEAR(out[0], col0, tol) << contract << (prec == Precision::fp32 ? " fp32" : " fp64");
    EXPECT_NEAR(out[1], col1, tol) << contract << (prec == Precision::fp32 ? " fp32" : " fp64");
    // The ideal reference rounds at no point.
    const auto ideal = reference_moe(t.spec, t.ckpt, r, ReferenceKind::ideal, prec);
    if (gate == 32) EXPECT_NEAR(ideal[0], -96.5625, 1e-9) << contract;
    else EXPECT_NEAR(ideal[0], -2.2060263749674953, 1e-6) << contract;
  }
  const auto nv = naive::moe(t.spec, t.ckpt, naive::route(t.spec, t.ckpt), true);
  EXPECT_NEAR(nv[0], col0, tol) << contract << " naive";
  EXPECT_NEAR(nv[1], col1, tol) << contract << " naive";
}

TEST(RoundingPoints, NoPointRoundsByDefault) { expect_out("default", -96.5625, 32.1875); }
TEST(RoundingPoints, GateUpRoundsHBeforeTheActivation) { expect_out("gate_up=bf16", -96.75, 32.25); }
TEST(RoundingPoints, SlotRoundsEachWeightedSlot) { expect_out("slot=bf16", -96.625, 32.1875); }
TEST(RoundingPoints, ReduceRoundsAfterEachAddition) { expect_out("reduce=bf16", -96.5, 32.25); }
TEST(RoundingPoints, VllmPipelineRoundsGateUpAndSlotsTiesToEven) { expect_out("gate_up=bf16,slot=bf16", -96.75, 32.3125); }
TEST(RoundingPoints, ActGateDefaultMultipliesTheUnroundedSilu) {
  expect_out("default", -2.2060263749674953, 0.7353421249891651, 1.0f, 1e-6);
}
TEST(RoundingPoints, ActGateRoundsSiluBeforeTheMultiply) {
  expect_out("act_gate=bf16", -2.2042465209960938, 0.7347488403320312, 1.0f);
}
TEST(RoundingPoints, F16KeepsTheseValues) { expect_out("gate_up=f16,slot=f16,reduce=f16", -96.5625, 32.1875); }

// The scale's form (token_scale_form / group_scale_form), through the whole pipeline (scale_form_case.hpp): x =
// [0.6328125, 2.625] quantized to fp8 (per token, or one 1 x 128 group), both experts with gate row [0, 32], up row
// [1, 0] and W2 column [1, 1]. s = 2.625 / 448 = 3 / 512: codes 112 (x / s = 108, a tie, to even) and 448, so x
// reads back as [0.65625, 2.625]; g = 32 * 2.625 = 84, silu(84) = 84 in fp32, u = 0.65625, z = 55.125, and z requantizes
// exactly (55.125 / 448 = 63 / 512): both outputs 0.75 z + 0.25 z = 55.125. With s = 2.625 * fp32(1 / 448) =
// 0x1.800002p-8 (formats/tests/fp8_quant_test.cpp) the code of x[0] is 104: u = 104 s = 0.609375 (1 + 2^-22 / 3),
// z = 84 u (g moves by the same 8e-8) = 51.1875 within 2e-7 relative, the requantization of z within another
// (tested to 1e-6: the two forms are 7% apart).
void expect_scale_form(const char* contract, ActFormat act, double want) {
  const ScaleFormCase t = scale_form_case(contract, act);
  const auto r = route(t.spec, t.ckpt);
  for (auto prec : {Precision::fp32, Precision::fp64}) {
    const auto out = reference_moe(t.spec, t.ckpt, r, ReferenceKind::contract, prec);
    for (int i : {0, 1}) EXPECT_NEAR(out[i], want, 1e-6 * want) << contract << (prec == Precision::fp32 ? " fp32" : " fp64");
  }
  const auto nv = naive::moe(t.spec, t.ckpt, naive::route(t.spec, t.ckpt), true);
  for (int i : {0, 1}) EXPECT_NEAR(nv[i], want, 1e-6 * want) << contract << " naive";
}

TEST(RoundingPoints, ScaleFormMovesTheCodeOfATieOnTheInput) {
  for (ActFormat act : {ActFormat::fp8_token, ActFormat::fp8_group128}) {
    expect_scale_form("default", act, 55.125);
    expect_scale_form("token_scale=reciprocal,group_scale=reciprocal", act, 55.125);  // x * fp32(1 / s) = 108: tie
    expect_scale_form("token_scale_form=qmax_reciprocal,group_scale_form=qmax_reciprocal", act, 51.1875);
  }
  expect_scale_form("token_scale_form=qmax_reciprocal", ActFormat::fp8_token, 51.1875);
  expect_scale_form("group_scale_form=qmax_reciprocal", ActFormat::fp8_token, 55.125);  // not its granularity
  expect_scale_form("group_scale_form=qmax_reciprocal", ActFormat::fp8_group128, 51.1875);
  expect_scale_form("token_scale_form=qmax_reciprocal", ActFormat::fp8_group128, 55.125);
}

}  // namespace
}  // namespace moe
