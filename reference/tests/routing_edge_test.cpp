// Routing edge cases (ProblemSpec::routing.edge): the ids and weights each edge produces, and what the reference
// makes of them, on the two-expert fixture of hand_moe_test.cpp. The expert outputs were computed by hand for
// x = [1, 2, 0, -1] (silu by calculator): expert 0 alone y0 = [0.7310585786, 5.284782468, 6.015841047, 0],
// expert 1 alone y1 = [-0.5378828428, 0, -1.075765686, 0]; the mixes below are written out, not produced by the code.
#include <gtest/gtest.h>

#include <vector>

#include "fixtures/checkpoint.hpp"
#include "formats/bf16.hpp"
#include "reference/moe/reference_moe.hpp"
#include "reference/routing/routing.hpp"

namespace moe {
namespace {

struct Tiny {
  ProblemSpec spec;
  Checkpoint ckpt;
};

// One token routed to experts {0, 1} with weights {0.75, 0.25} (precomputed), fp32 everywhere.
Tiny make(RoutingEdge edge) {
  Tiny t;
  ProblemSpec& s = t.spec;
  s.hidden = 4; s.inter = 2; s.experts = 2; s.topk = 2; s.tokens = 1;
  s.routing.kind = RoutingKind::precomputed;
  s.routing.edge = edge;
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

void expect_out(const Tiny& t, const RoutingResult& r, const std::vector<double>& want) {
  const auto out = reference_moe(t.spec, t.ckpt, r, ReferenceKind::contract);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[i], want[i], 1e-6) << "column " << i;
}

RoutingResult routing(std::int64_t tokens, int k, std::vector<std::int32_t> ids) {
  return {tokens, k, std::move(ids), std::vector<float>(std::size_t(tokens * k), 0.5f)};
}

}  // namespace

TEST(RoutingEdge, DuplicateIdCountsBothSlots) {
  const Tiny t = make(RoutingEdge::duplicate_id);
  const RoutingResult r = route(t.spec, t.ckpt);
  EXPECT_EQ(r.ids, (std::vector<std::int32_t>{0, 0}));
  expect_out(t, r, {0.7310585786, 5.284782468, 6.015841047, 0});  // 0.75 y0 + 0.25 y0
}

TEST(RoutingEdge, AMaskedSlotContributesNothingAndAFullyMaskedTokenIsExactlyZero) {
  const Tiny t = make(RoutingEdge::masked_ids);
  const RoutingResult r = route(t.spec, t.ckpt);  // the one token is the last: every slot masked
  EXPECT_EQ(r.ids, (std::vector<std::int32_t>{-1, -1}));
  const auto out = reference_moe(t.spec, t.ckpt, r, ReferenceKind::contract);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], 0.0f) << "column " << i;
  expect_out(t, {1, 2, {0, -1}, {0.75f, 0.25f}}, {0.5482939340, 3.963586851, 4.511880785, 0});  // 0.75 y0
}

TEST(RoutingEdge, ZeroWeightsContributeNothing) {
  const Tiny t = make(RoutingEdge::zero_weights);
  const RoutingResult r = route(t.spec, t.ckpt);  // the first token: every weight 0
  EXPECT_EQ(r.weights, (std::vector<float>{0.0f, 0.0f}));
  const auto out = reference_moe(t.spec, t.ckpt, r, ReferenceKind::contract);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], 0.0f) << "column " << i;
  expect_out(t, {1, 2, {0, 1}, {0.0f, 0.25f}}, {-0.1344707107, 0, -0.2689414215, 0});  // 0.25 y1
}

TEST(RoutingEdge, IdsOfEachEdgeOnThreeTokens) {
  ProblemSpec p;
  p.experts = 4; p.topk = 2; p.tokens = 3;
  auto edged = [&](RoutingEdge e, int ep, int rank) {
    p.routing.edge = e; p.ep = ep; p.ep_rank = rank;
    RoutingResult r = routing(3, 2, {1, 2, 3, 0, 0, 2});
    apply_routing_edge(p, r);
    return r;
  };
  EXPECT_EQ(edged(RoutingEdge::none, 1, 0).ids, (std::vector<std::int32_t>{1, 2, 3, 0, 0, 2}));
  EXPECT_EQ(edged(RoutingEdge::duplicate_id, 1, 0).ids, (std::vector<std::int32_t>{1, 1, 3, 0, 0, 0}));
  EXPECT_EQ(edged(RoutingEdge::masked_ids, 1, 0).ids, (std::vector<std::int32_t>{1, -1, 3, -1, -1, -1}));
  EXPECT_EQ(edged(RoutingEdge::one_expert, 1, 0).ids, (std::vector<std::int32_t>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(edged(RoutingEdge::one_expert, 2, 1).ids, (std::vector<std::int32_t>{2, 3, 2, 3, 2, 3}));
  // odd ids replaced by the lowest even id the token does not hold: 1 -> 0; 3 -> 2 (0 is held); {0, 2} stays
  EXPECT_EQ(edged(RoutingEdge::empty_experts, 1, 0).ids, (std::vector<std::int32_t>{0, 2, 2, 0, 0, 2}));
  // rank 0 of 2 holds {0, 1}: each replaced by the lowest of {2, 3} the token does not hold
  EXPECT_EQ(edged(RoutingEdge::ep_rank_empty, 2, 0).ids, (std::vector<std::int32_t>{3, 2, 3, 2, 3, 2}));
  const RoutingResult z = edged(RoutingEdge::zero_weights, 1, 0);
  EXPECT_EQ(z.ids, (std::vector<std::int32_t>{1, 2, 3, 0, 0, 2}));
  EXPECT_EQ(z.weights, (std::vector<float>{0, 0, 0.5f, 0, 0.5f, 0}));
}

TEST(RoutingEdge, ValidateRefusesAnEdgeWithoutRoom) {
  ProblemSpec p;
  p.hidden = 4; p.inter = 2; p.experts = 4; p.topk = 1;
  p.routing.edge = RoutingEdge::duplicate_id;
  ASSERT_TRUE(validate(p));
  EXPECT_EQ(validate(p)->key, "routing.edge");
  p.routing.edge = RoutingEdge::ep_rank_empty;  // one rank owns every expert
  ASSERT_TRUE(validate(p));
  p.ep = 2; p.topk = 2;
  EXPECT_FALSE(validate(p));
  p.topk = 3;  // the other rank holds 2
  EXPECT_TRUE(validate(p));
  p.ep = 1; p.topk = 3; p.routing.edge = RoutingEdge::empty_experts;  // even ids {0, 2}
  EXPECT_TRUE(validate(p));
  p.topk = 2;
  EXPECT_FALSE(validate(p));
}

}  // namespace moe
