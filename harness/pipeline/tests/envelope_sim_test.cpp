// The ensembles simulate_envelope draws (harness/pipeline/envelope_sim.hpp): the sparse members only where a GEMM
// accumulates with fewer bits than fp32, and then on every token of the case up to kSparseMaxTokens, where the
// accumulation and rounding members sample kEnsembleMaxTokens.
#include <gtest/gtest.h>

#include "fixtures/checkpoint.hpp"
#include "fixtures/rounding_contract.hpp"
#include "harness/pipeline/envelope_sim.hpp"
#include "reference/moe/ensemble.hpp"

namespace moe {
namespace {

ProblemSpec fp8_case(const char* contract, std::int64_t tokens) {
  ProblemSpec p;
  p.hidden = 256; p.inter = 128; p.experts = 4; p.topk = 2; p.tokens = tokens;
  p.quant.weight = WeightFormat::fp8_channel;
  p.quant.act = ActFormat::fp8_token;
  p.seed = 7;
  return with_contract(p, *parse_rounding_contract(contract).contract);
}

Envelope simulate(const ProblemSpec& p) {
  const Checkpoint c = generate_checkpoint(p);
  const RoutingResult r = route(p, c);
  return simulate_envelope(p, c, r, reference_moe(p, c, r, ReferenceKind::contract),
                           reference_moe(p, c, r, ReferenceKind::ideal), {});
}

// token_gain's components are the judged tokens: what each group's members were measured on.
double token_components(const EnvelopeMember& m) {
  for (const StatisticRecord& s : m.systematic)
    if (s.name == "token_gain") return s.components;
  return -1;
}

TEST(EnvelopeSim, SparseMembersOnlyForANarrowAccumulatorAndOnEveryToken) {
  const Envelope f32 = simulate(fp8_case("default", 40));
  EXPECT_EQ(f32.members.size(), std::size_t(kEnsembleMembers));
  EXPECT_EQ(f32.rounding.size(), std::size_t(kEnsembleMembers));
  EXPECT_TRUE(f32.sparse.empty());
  EXPECT_EQ(f32.model.find("sparse"), std::string::npos);

  const Envelope mma = simulate(fp8_case("accum=mma14", 40));
  ASSERT_EQ(mma.sparse.size(), std::size_t(kSparseMembers));
  ASSERT_EQ(mma.sampled.size(), std::size_t(kEnsembleMaxTokens));
  EXPECT_EQ(token_components(mma.members[0]), double(kEnsembleMaxTokens));
  EXPECT_EQ(token_components(mma.rounding[0]), double(kEnsembleMaxTokens));
  for (const EnvelopeMember& m : mma.sparse) {
    EXPECT_EQ(token_components(m), 40.0);  // all 40 tokens, not the 32 sampled
    EXPECT_TRUE(m.token_cos.empty());      // statistics only
  }
  EXPECT_NE(mma.model.find("sparse=8 on 40 tokens"), std::string::npos) << mma.model;

  // A case within the sample: every group on all its tokens.
  const Envelope small = simulate(fp8_case("accum=mma14", 12));
  ASSERT_EQ(small.sparse.size(), std::size_t(kSparseMembers));
  EXPECT_EQ(token_components(small.members[0]), 12.0);
  EXPECT_EQ(token_components(small.sparse[0]), 12.0);
}

}  // namespace
}  // namespace moe
