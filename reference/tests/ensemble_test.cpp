// The simulated envelope's members (reference/moe/ensemble.hpp): which tokens they cover, that they are the
// contract reference up to the modelled accumulation error (its size and, for a matrix unit, its sign), and that
// they are a pure function of the seed.
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures/checkpoint.hpp"
#include "fixtures/error.hpp"
#include "fixtures/rounding_contract.hpp"
#include "reference/moe/ensemble.hpp"
#include "reference/moe/reference_moe.hpp"

namespace moe {
namespace {

TEST(Ensemble, TokensAreAllUpToTheCapThenEvenlySpaced) {
  EXPECT_EQ(ensemble_tokens(3), (std::vector<std::int64_t>{0, 1, 2}));
  const std::vector<std::int64_t> t = ensemble_tokens(128);
  ASSERT_EQ(std::int64_t(t.size()), kEnsembleMaxTokens);
  EXPECT_EQ(t[1], 4);  // floor(1 x 128 / 32)
  EXPECT_EQ(t.back(), 124);
  // The sparse ensemble's cap: every token of a 128-token case, 128 of a 300-token one.
  EXPECT_EQ(ensemble_tokens(128, kSparseMaxTokens).size(), 128u);
  const std::vector<std::int64_t> s = ensemble_tokens(300, kSparseMaxTokens);
  ASSERT_EQ(s.size(), 128u);
  EXPECT_EQ(s[1], 2);        // floor(300 / 128)
  EXPECT_EQ(s.back(), 297);  // floor(127 x 300 / 128)
}

TEST(Ensemble, AccumulationBitsApplyOnlyWhereBothOperandsAreNarrow) {
  ProblemSpec p;
  p.accum_bits = 13;
  QuantScheme q;  // bf16 weights, no activation quantization
  EXPECT_EQ(gemm_accum_bits(p, q), 24);
  q.weight = WeightFormat::fp8_channel;
  EXPECT_EQ(gemm_accum_bits(p, q), 24);  // fp8 weights, bf16 activations: a bf16 GEMM after dequantization
  q.act = ActFormat::fp8_token;
  EXPECT_EQ(gemm_accum_bits(p, q), 13);
}

ProblemSpec fp8_case(const char* contract) {
  ProblemSpec p;
  p.hidden = 256; p.inter = 128; p.experts = 4; p.topk = 2; p.tokens = 6;
  p.quant.weight = WeightFormat::fp8_channel;
  p.quant.act = ActFormat::fp8_token;
  p.intermediate = IntermediateDtype::f32;
  p.output_dtype = DType::f32;
  p.seed = 5;
  return with_contract(p, *parse_rounding_contract(contract).contract);
}

// Relative distance of member rows from the contract's, and the members' slope b - 1 on the contract.
struct Distance { double rel = 0, gain = 0; };
Distance distance(const ProblemSpec& p, std::uint64_t seed, double gemm_scale = 1.0, bool truncation = true) {
  const Checkpoint c = generate_checkpoint(p);
  const RoutingResult r = route(p, c);
  const Values ref = reference_moe(p, c, r, ReferenceKind::contract);
  EnsembleSpec e;
  e.members = 4;
  e.seed = seed;
  e.gemm_scale = gemm_scale;
  e.truncation = truncation;
  e.tokens = ensemble_tokens(p.tokens);
  const std::vector<Values> m = reference_ensemble(p, c, r, e);
  double dd = 0, rr = 0, er = 0;
  for (const Values& v : m)
    for (std::int64_t i = 0; i < p.tokens * p.hidden; ++i) {
      const double d = double(v[i]) - ref[i];
      dd += d * d; rr += double(ref[i]) * ref[i]; er += d * ref[i];
    }
  return {std::sqrt(dd / rr), er / rr};
}

TEST(Ensemble, MembersAreTheContractUpToTheDeclaredAccumulation) {
  // Exact fp32 accumulation: the members move by about 2^-24 of ||a|| ||w|| per GEMM output, flipping an fp8 code of
  // the requantized intermediate now and then: far below the fp8 noise (2^-4 relative) of a code step.
  const Distance f32 = distance(fp8_case("default"), 1);
  EXPECT_GT(f32.rel, 0.0);
  EXPECT_LT(f32.rel, 1e-2);
  // An 8-bit accumulator (2^-8 of ||a|| ||w||, truncating): many more codes flip, the output moves by more, and the
  // truncation toward zero shows as a slope below 1.
  const Distance mma = distance(fp8_case("accum=mma8"), 1);
  EXPECT_GT(mma.rel, 4 * f32.rel);
  EXPECT_LT(mma.gain, 0.0);
}

// A sparse member (kSparseGemmScale of the declared accumulation's error, without its bias) moves the output less
// than the accumulation members and does not shrink it.
TEST(Ensemble, SparseMembersAreSmallerAndUnbiased) {
  const Distance mma = distance(fp8_case("accum=mma8"), 1);
  const Distance sparse = distance(fp8_case("accum=mma8"), 1, kSparseGemmScale, false);
  EXPECT_GT(sparse.rel, 0.0);
  EXPECT_LT(sparse.rel, 0.5 * mma.rel);
  // The truncating members' slope is their bias (one sigma toward zero per GEMM output); at a quarter of the size
  // with the bias kept it would be about a quarter of theirs, without it only noise: well under a tenth.
  EXPECT_LT(std::fabs(sparse.gain), 0.1 * std::fabs(mma.gain));
}

TEST(Ensemble, MembersArePureFunctionsOfTheSeed) {
  const ProblemSpec p = fp8_case("accum=mma10");
  const Checkpoint c = generate_checkpoint(p);
  const RoutingResult r = route(p, c);
  EnsembleSpec e;
  e.members = 2;
  e.seed = 9;
  e.tokens = {1, 4};
  const std::vector<Values> a = reference_ensemble(p, c, r, e), b = reference_ensemble(p, c, r, e);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(a[0].size(), std::size_t(2 * p.hidden));
  EXPECT_TRUE(std::equal(a[0].begin(), a[0].end(), b[0].begin()));
  EXPECT_FALSE(std::equal(a[0].begin(), a[0].end(), a[1].begin()));  // two members, two draws
}

TEST(Ensemble, OnePassGivesEachGroupItsOwnMembers) {
  // A joint pass shares the decoded weights and the stage-1 GEMM; each group's members must be the ones its own call
  // draws (few rows: every GEMM output is the same row dot product in both).
  const ProblemSpec p = fp8_case("accum=mma12");
  const Checkpoint c = generate_checkpoint(p);
  const RoutingResult r = route(p, c);
  EnsembleSpec a;
  a.members = 2;
  a.seed = 3;
  a.tokens = {0, 2, 5};
  EnsembleSpec b = a;
  b.seed = 4;
  b.act_noise = half_ulp_noise(IntermediateDtype::bf16);
  b.gemm_noise = false;
  const std::vector<std::vector<Values>> joint = reference_ensembles(p, c, r, {a, b});
  ASSERT_EQ(joint.size(), 2u);
  const std::vector<Values> sa = reference_ensemble(p, c, r, a), sb = reference_ensemble(p, c, r, b);
  ASSERT_EQ(joint[0].size(), sa.size());
  ASSERT_EQ(joint[1].size(), sb.size());
  for (std::size_t m = 0; m < sa.size(); ++m) {
    EXPECT_EQ(joint[0][m], sa[m]) << "accumulation member " << m;
    EXPECT_EQ(joint[1][m], sb[m]) << "rounding member " << m;
  }
  EnsembleSpec other = a;
  other.tokens = {1};
  EXPECT_THROW(reference_ensembles(p, c, r, {a, other}), Error);
}

}  // namespace
}  // namespace moe
