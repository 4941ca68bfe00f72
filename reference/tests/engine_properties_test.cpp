#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>

#include "fixtures/checkpoint.hpp"
#include "fixtures/error.hpp"
#include "reference/moe/reference_moe.hpp"
#include "reference/naive/naive_moe.hpp"

namespace moe {
namespace {
ProblemSpec base() {
  ProblemSpec s;
  s.hidden = 128; s.inter = 256; s.experts = 16; s.topk = 4; s.tokens = 24; s.seed = 5;
  s.quant.weight = WeightFormat::fp8_block; s.quant.act = ActFormat::fp8_group128;
  return s;
}
}  // namespace

TEST(ReferenceEngine, TwoTpSettingsWithTheSameLocalInterAreBitIdentical) {
  ProblemSpec a = base(), b = base();
  a.inter = 512; a.tp = 4;  // local 128
  b.inter = 256; b.tp = 2;  // local 128
  const Checkpoint ca = generate_checkpoint(a), cb = generate_checkpoint(b);
  EXPECT_EQ(ca.fingerprint(), cb.fingerprint());
  const auto ra = reference_moe(a, ca, route(a, ca), ReferenceKind::contract);
  const auto rb = reference_moe(b, cb, route(b, cb), ReferenceKind::contract);
  ASSERT_EQ(ra.size(), rb.size());
  EXPECT_EQ(0, std::memcmp(ra.data(), rb.data(), ra.size() * sizeof(float)));
}

TEST(ReferenceEngine, SameBitsForOneAndTwoThreads) {
  ProblemSpec s = base();
  s.tokens = 40;  // some experts above the streaming threshold, some below
  const Checkpoint c = generate_checkpoint(s);
  const auto r = route(s, c);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = reference_moe(s, c, r, ReferenceKind::contract);
  omp_set_num_threads(2);
  const auto two = reference_moe(s, c, r, ReferenceKind::contract);
  omp_set_num_threads(saved);
  EXPECT_EQ(0, std::memcmp(one.data(), two.data(), one.size() * sizeof(float)));
}

TEST(ReferenceEngine, EpShardsSumToTheFullLayer_OnlyLocalExpertsContribute) {
  ProblemSpec full = base();
  full.output_dtype = DType::f32;
  full.intermediate = IntermediateDtype::f32;
  const Checkpoint cf = generate_checkpoint(full);
  const auto r = route(full, cf);
  const auto want = reference_moe(full, cf, r, ReferenceKind::contract, Precision::fp64);
  std::vector<double> sum(want.size(), 0.0);
  for (int rank = 0; rank < 4; ++rank) {
    ProblemSpec s = full;
    s.ep = 4; s.ep_rank = rank;
    const Checkpoint c = generate_checkpoint(s);
    EXPECT_EQ(c.routed.count(), 4);
    const auto part = reference_moe(s, c, r, ReferenceKind::contract, Precision::fp64);
    // Each shard on its own agrees with the naive implementation restricted to its experts.
    const auto nv = naive::moe(s, c, naive::route(s, c), true);
    for (std::size_t i = 0; i < part.size(); ++i) EXPECT_NEAR(part[i], nv[i], 1e-5 * (1 + std::fabs(nv[i])));
    for (std::size_t i = 0; i < part.size(); ++i) sum[i] += part[i];
  }
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(sum[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << i;
}

TEST(ReferenceEngine, SharedExpertWithItsOwnSchemeAddsWithWeightOne) {
  ProblemSpec s = base();
  s.n_shared = 1; s.shared_inter = 192;
  s.shared_quant.weight = WeightFormat::fp8_channel; s.shared_quant.act = ActFormat::fp8_token;
  s.output_dtype = DType::f32;
  const Checkpoint c = generate_checkpoint(s);
  const auto r = route(s, c);
  const auto with = reference_moe(s, c, r, ReferenceKind::contract, Precision::fp64);
  const auto nv = naive::moe(s, c, naive::route(s, c), true);
  for (std::size_t i = 0; i < with.size(); ++i) EXPECT_NEAR(with[i], nv[i], 1e-5 * (1 + std::fabs(nv[i])));
  ProblemSpec no = s;
  no.n_shared = 0;
  const auto without = reference_moe(no, c, r, ReferenceKind::contract, Precision::fp64);
  double diff = 0;
  for (std::size_t i = 0; i < with.size(); ++i) diff += std::fabs(with[i] - without[i]);
  EXPECT_GT(diff, 1.0);
}

TEST(ReferenceEngine, NeverWritesIntoThePristineCheckpoint) {
  ProblemSpec s = base();
  const Checkpoint c = generate_checkpoint(s);
  const auto before = c.fingerprint();
  reference_moe(s, c, route(s, c), ReferenceKind::contract);
  reference_moe(s, c, route(s, c), ReferenceKind::ideal, Precision::fp64);
  EXPECT_EQ(c.fingerprint(), before);
}

TEST(ReferenceEngine, ContractAndIdealDifferByTheRecipesQuantizationError) {
  ProblemSpec s = base();
  const Checkpoint c = generate_checkpoint(s);
  const auto r = route(s, c);
  const auto con = reference_moe(s, c, r, ReferenceKind::contract);
  const auto ide = reference_moe(s, c, r, ReferenceKind::ideal);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < con.size(); ++i) { num += (con[i] - ide[i]) * (con[i] - ide[i]); den += ide[i] * ide[i]; }
  const double rel = std::sqrt(num / den);
  EXPECT_GT(rel, 1e-4);  // fp8 activations really are quantized in the contract reference
  EXPECT_LT(rel, 0.1);   // ... and only by fp8's error
}

}  // namespace moe

namespace moe {
// A harness error raised inside the engine's expert region (here: an MXFP8 spec over an fp8 checkpoint, whose f32
// scales the MX dequantizer cannot read as E8M0 bytes) reaches the caller as a moe::Error, not std::terminate.
TEST(ReferenceEngine, AnErrorInsideTheExpertRegionReachesTheCaller) {
  ProblemSpec s = base();
  s.quant.weight = WeightFormat::fp8_channel; s.quant.act = ActFormat::fp8_token;
  const Checkpoint c = generate_checkpoint(s);
  const RoutingResult r = route(s, c);
  ProblemSpec mx = s;
  mx.quant.weight = WeightFormat::mxfp8; mx.quant.act = ActFormat::none;
  for (const ReferenceKind kind : {ReferenceKind::contract, ReferenceKind::ideal}) {
    try {
      (void)reference_moe(mx, c, r, kind);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::harness_error);
      EXPECT_NE(std::string(e.what()).find("w13_scale"), std::string::npos) << e.what();
    }
  }
}
}  // namespace moe
