// The separate shared-expert path (SharedPath::separate) by its definition: the model adds two outputs, each
// already rounded to the output dtype, and rounds the sum. The two outputs are taken from the same problem with the
// other set's weights zeroed (a zero bf16 expert contributes exactly 0), so the expected value is formed here from
// two independent runs, not from the code path under test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "fixtures/checkpoint.hpp"
#include "formats/bf16.hpp"
#include "reference/moe/reference_moe.hpp"
#include "reference/naive/naive_moe.hpp"

namespace moe {
namespace {

ProblemSpec spec(SharedPath path) {
  ProblemSpec s;
  s.hidden = 128; s.inter = 64; s.experts = 8; s.topk = 2; s.tokens = 6;
  s.n_shared = 1; s.shared_inter = 96;
  s.shared_path = path;
  s.seed = 3;
  return s;
}

void zero(ExpertWeights& w) {
  std::memset(w.w13.bytes(), 0, w.w13.nbytes());
  std::memset(w.w2.bytes(), 0, w.w2.nbytes());
}

TEST(SharedPath, SeparateIsTheRoundedSumOfTheRoutedAndSharedOutputsEachRounded) {
  const ProblemSpec sep = spec(SharedPath::separate), fused = spec(SharedPath::fused);
  ASSERT_FALSE(validate(sep).has_value());
  const Checkpoint c = generate_checkpoint(sep);
  const RoutingResult r = route(sep, c);
  Checkpoint routed_only = c.clone(), shared_only = c.clone();
  zero(routed_only.shared);
  zero(shared_only.routed);
  for (auto prec : {Precision::fp32, Precision::fp64}) {
    const Values got = reference_moe(sep, c, r, ReferenceKind::contract, prec);
    const Values whole = reference_moe(fused, c, r, ReferenceKind::contract, prec);
    const Values ro = reference_moe(fused, routed_only, r, ReferenceKind::contract, prec);  // rnd(R)
    const Values so = reference_moe(fused, shared_only, r, ReferenceKind::contract, prec);  // rnd(S)
    int differs = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_NE(ro[i], 0.0f) << i;  // both parts present: the test would prove nothing otherwise
      ASSERT_NE(so[i], 0.0f) << i;
      EXPECT_EQ(got[i], round_to_bf16(ro[i] + so[i])) << "element " << i;
      differs += got[i] != whole[i];
    }
    // The second rounding is visible: some elements differ from the fused path's single rounding.
    EXPECT_GT(differs, 0);
  }
  // The independent naive implementation agrees (to 1e-6 per token, as in naive_agreement_test); the ideal
  // reference has no rounding, so no separate path either.
  const auto nv = naive::moe(sep, c, naive::route(sep, c), true);
  const Values got = reference_moe(sep, c, r, ReferenceKind::contract, Precision::fp64);
  for (std::int64_t t = 0; t < sep.tokens; ++t) {
    double num = 0, den = 0;
    for (std::int64_t i = t * sep.hidden; i < (t + 1) * sep.hidden; ++i) {
      num += (got[i] - nv[i]) * (got[i] - nv[i]);
      den += nv[i] * nv[i];
    }
    EXPECT_LE(std::sqrt(num / den), 1e-6) << "naive, token " << t;
  }
  const Values ideal_sep = reference_moe(sep, c, r, ReferenceKind::ideal, Precision::fp64);
  const Values ideal_fused = reference_moe(fused, c, r, ReferenceKind::ideal, Precision::fp64);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(ideal_sep[i], ideal_fused[i]) << i;
}

}  // namespace
}  // namespace moe
