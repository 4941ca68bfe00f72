// The statistics that look where gain, channel and rounding bias do not: a signed offset, one token's own gain,
// and each expert's own gain estimated on its slot contributions. Each planted defect is the one its test names,
// with the effect size the construction gives; correct outputs (the reference plus zero-mean noise) stay inside.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "formats/bf16.hpp"
#include "verdict/systematic.hpp"

namespace moe {
namespace {

constexpr int kE = 16, kK = 4;

// A synthetic layer output: each token's k slot contributions (random, routed to experts (3 i + 5 j) mod 16), the
// exact sum, the reference (the sum rounded to bf16) and the routing.
struct Layer {
  std::int64_t t, h;
  std::vector<float> slots;   // [t, k, h]
  std::vector<double> exact;  // [t, h]
  std::vector<float> ref;
  RoutingResult routing;
};

Layer make(std::int64_t t, std::int64_t h, unsigned seed) {
  Layer l{t, h, {}, std::vector<double>(std::size_t(t * h), 0.0), {}, {t, kK, {}, {}}};
  std::mt19937_64 g(seed);
  std::normal_distribution<double> n(0.0, 0.5);
  for (std::int64_t i = 0; i < t; ++i)
    for (int j = 0; j < kK; ++j) {
      l.routing.ids.push_back(std::int32_t((3 * i + 5 * j) % kE));
      l.routing.weights.push_back(0.25f);
      for (std::int64_t c = 0; c < h; ++c) {
        l.slots.push_back(float(n(g)));
        l.exact[i * h + c] += l.slots.back();
      }
    }
  for (double x : l.exact) l.ref.push_back(round_to_bf16(float(x)));
  return l;
}

// The exact values plus zero-mean absolute noise of standard deviation `noise`.
std::vector<double> noisy(const Layer& l, double noise, unsigned seed) {
  std::mt19937_64 g(seed * 31 + 7);
  std::normal_distribution<double> n(0.0, noise);
  std::vector<double> v = l.exact;
  for (double& x : v) x += n(g);
  return v;
}

Tensor bf16(const std::vector<double>& v, std::int64_t t, std::int64_t h) {
  Tensor o("out", DType::bf16, {t, h});
  for (std::size_t i = 0; i < v.size(); ++i) o.span<std::uint16_t>()[i] = bf16_from_f32(float(v[i]));
  return o;
}

std::vector<StatisticRecord> stats(const Layer& l, const Tensor& o, bool with_slots) {
  SystematicInput in{l.ref, o, l.t, l.h, l.routing, 0, kE};
  if (with_slots) in.slots = l.slots;
  return systematic_checks(in, SystematicThresholds{});
}
const StatisticRecord& get(const std::vector<StatisticRecord>& v, const std::string& name) {
  for (const auto& s : v)
    if (s.name == name) return s;
  throw std::runtime_error("no statistic " + name);
}

double mean_abs(const Layer& l) {
  double a = 0;
  for (float r : l.ref) a += std::fabs(r);
  return a / double(l.ref.size());
}

}  // namespace

TEST(SystematicPower, CorrectOutputsPassOffsetTokenGainAndExpertWithSlots) {
  for (std::int64_t t : {1, 3, 64})
    for (unsigned seed = 1; seed <= 10; ++seed) {
      const Layer l = make(t, 512, seed);
      const auto v = stats(l, bf16(noisy(l, 2e-3, seed), t, 512), true);
      for (const char* name : {"offset", "token_gain", "expert"}) {
        const auto& s = get(v, name);
        EXPECT_TRUE(s.ran()) << name << " " << s.status;
        EXPECT_FALSE(s.failed) << name << " T=" << t << " seed " << seed << systematic_lines(v);
        EXPECT_LT(std::fabs(s.z), 5.0) << name << " T=" << t << " seed " << seed;
      }
    }
}

// A constant offset of 1e-3 x mean |r| on every element (the held-out defect that no statistic saw): the
// offset statistic's effect is that 1e-3 by construction, on one token as on many.
TEST(SystematicPower, ConstantOffsetFailsOffsetWithItsSize) {
  for (std::int64_t t : {1, 4, 64}) {
    const Layer l = make(t, 2048, 5);
    auto v = noisy(l, 2e-4, 5);
    const double c = 1e-3 * mean_abs(l);
    for (double& x : v) x += c;
    const auto st = stats(l, bf16(v, t, 2048), true);
    const auto& s = get(st, "offset");
    EXPECT_TRUE(s.failed) << "T=" << t << systematic_lines(st);
    EXPECT_NEAR(s.effect, 1e-3, 1e-4) << "T=" << t;
    EXPECT_FALSE(get(st, "gain").failed) << "an offset is no gain: T=" << t << systematic_lines(st);
  }
}

// One token 3 % too large at T = 1 fails token_gain (and gain); 2 % on 2 of 64 tokens fails token_gain at one of
// them while the all-token gain, diluted to 2e-2 x 2 / 64 = 6.3e-4, stays under its floor.
TEST(SystematicPower, OneTokensGainFailsTokenGainWhereTheAllTokenGainIsDiluted) {
  {
    const Layer l = make(1, 2048, 3);
    auto v = noisy(l, 2e-4, 3);
    for (double& x : v) x *= 1.03;
    const auto st = stats(l, bf16(v, 1, 2048), true);
    EXPECT_TRUE(get(st, "token_gain").failed) << systematic_lines(st);
    EXPECT_NEAR(get(st, "token_gain").effect, 0.03, 1e-3);
    EXPECT_EQ(get(st, "token_gain").at, "token 0 (of 1)");
  }
  const Layer l = make(64, 512, 4);
  auto v = noisy(l, 2e-4, 4);
  for (std::int64_t i : {17, 40})
    for (std::int64_t c = 0; c < 512; ++c) v[i * 512 + c] *= 1.02;
  const auto st = stats(l, bf16(v, 64, 512), true);
  const auto& tg = get(st, "token_gain");
  EXPECT_TRUE(tg.failed) << systematic_lines(st);
  EXPECT_TRUE(tg.at == "token 17 (of 64)" || tg.at == "token 40 (of 64)") << tg.at;
  EXPECT_NEAR(tg.effect, 0.02, 1e-3);
  EXPECT_FALSE(get(st, "gain").failed) << systematic_lines(st);
}

// Expert 3's contributions 2 % too large: with the slots, the expert statistic's effect is the expert's own gain
// (0.02 by construction), not its tokens' gain diluted by their other k - 1 slots (about 0.02 / 4 here).
TEST(SystematicPower, ExpertsOwnGainIsEstimatedOnItsContributions) {
  const Layer l = make(128, 512, 6);
  auto v = noisy(l, 2e-4, 6);
  for (std::int64_t i = 0; i < 128; ++i)
    for (int j = 0; j < kK; ++j)
      if (l.routing.ids[i * kK + j] == 3)
        for (std::int64_t c = 0; c < 512; ++c) v[i * 512 + c] += 0.02 * l.slots[(i * kK + j) * 512 + c];
  const Tensor o = bf16(v, 128, 512);
  const auto with = stats(l, o, true);
  const auto& e = get(with, "expert");
  EXPECT_TRUE(e.failed) << systematic_lines(with);
  EXPECT_EQ(e.at.rfind("expert 3 (", 0), 0u) << e.at;
  EXPECT_NEAR(e.effect, 0.02, 1e-3);
  const auto without = stats(l, o, false);
  const auto& diluted = get(without, "expert");
  EXPECT_NEAR(diluted.effect, 0.02 / kK, 2e-3) << "the token-group difference sees the diluted gain";
}

}  // namespace moe
