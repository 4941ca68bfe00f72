// case_slot_steps (harness/pipeline/slot_steps.hpp): what expert_partial and token_gain are handed for a case. Row r
// of the judged output is case token rows[r]; slot -1 gathers the token's routed slots and then its shared expert
// (slot k); nothing where the accumulation is fp32 or there are no weights. Checked against slot_scale_steps called
// directly on the case's tokens.
#include <gtest/gtest.h>

#include "fixtures/checkpoint.hpp"
#include "fixtures/rounding_contract.hpp"
#include "harness/pipeline/slot_steps.hpp"
#include "reference/moe/band_explain.hpp"

namespace moe {
namespace {

ProblemSpec narrow_case(const char* contract) {
  ProblemSpec p;
  p.hidden = 256; p.inter = 128; p.experts = 4; p.topk = 2; p.tokens = 4;
  p.n_shared = 1; p.shared_inter = 128;
  p.quant.weight = p.shared_quant.weight = WeightFormat::fp8_channel;
  p.quant.act = p.shared_quant.act = ActFormat::fp8_token;
  p.seed = 11;
  return with_contract(p, *parse_rounding_contract(contract).contract);
}

TEST(SlotSteps, RowsAreTheCasesTokensAndEverySlotGathersTheSharedExpert) {
  // Eight significand bits: every slot's amax reaches other requantizations.
  const ProblemSpec p = narrow_case("accum=mma8");
  ASSERT_TRUE(narrow_accumulation(p));
  const Checkpoint c = generate_checkpoint(p);
  const RoutingResult r = route(p, c);
  const auto steps = case_slot_steps(p, &c, r, {3, 1});
  ASSERT_TRUE(steps);
  for (std::int64_t j = 0; j < 3; ++j) {  // two routed slots, the shared expert
    const auto direct = slot_scale_steps(p, c, r, 3, j);
    EXPECT_FALSE(direct.empty()) << "slot " << j;
    EXPECT_EQ(steps(0, j), direct) << "slot " << j;  // row 0 is token 3
  }
  std::vector<std::vector<double>> all;
  for (std::int64_t j = 0; j < 3; ++j)
    for (const auto& v : slot_scale_steps(p, c, r, 1, j)) all.push_back(v);
  EXPECT_EQ(steps(1, -1), all);  // row 1 is token 1: its routed slots, then its shared expert
  EXPECT_EQ(steps(1, -1), steps(1, -1));  // the memo gives the same
  // fp32 accumulation, or no weights: nothing to explain with.
  const ProblemSpec wide = narrow_case("accum=f32");
  EXPECT_FALSE(narrow_accumulation(wide));
  EXPECT_FALSE(case_slot_steps(wide, &c, r));
  EXPECT_FALSE(case_slot_steps(p, nullptr, r));
}

}  // namespace
}  // namespace moe
