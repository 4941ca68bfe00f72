#include "verdict/judge.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "fixtures/error.hpp"
#include "fixtures/tensor_element.hpp"

namespace moe {
namespace {
constexpr std::int64_t kT = 64, kH = 128;
std::vector<float> reference() {
  std::vector<float> r(kT * kH);
  for (std::int64_t i = 0; i < kT * kH; ++i) r[i] = std::sin(0.37f * float(i)) + 0.1f;
  return r;
}
Tensor as_output(const std::vector<float>& v) {
  Tensor t("out", DType::f32, {kT, kH});
  std::copy(v.begin(), v.end(), t.span<float>().begin());
  return t;
}
RoutingResult routing() {
  RoutingResult r{kT, 2, std::vector<std::int32_t>(kT * 2, 3), std::vector<float>(kT * 2, 0.5f)};
  return r;
}
Thresholds th() {
  Thresholds t;
  t.min_cos = 0.9999; t.max_rel = 0.01; t.atol = 1e-3; t.rtol = 1e-2; t.max_mismatch_fraction = 0.001;
  return t;
}
}  // namespace

TEST(Judge, CorrectOutputPasses) {
  const auto r = reference();
  const Judgement j = judge(r, {}, as_output(r), kT, kH, th(), routing());
  EXPECT_TRUE(j.pass) << j.summary;
  EXPECT_DOUBLE_EQ(j.min_cos, 1.0);
}

// RTP-LLM's mean cosine over tokens hides one bad token: 63 perfect tokens and one at cos ~0.87 average to 0.998.
TEST(Judge, OneBadTokenAmongManyFailsOnMinCosAndIsNamed) {
  const auto r = reference();
  auto o = r;
  for (std::int64_t c = 0; c < kH; c += 4) o[17 * kH + c] = 0.0f;  // a quarter of one token lost: cos ~0.87
  const Judgement j = judge(r, {}, as_output(o), kT, kH, th(), routing());
  double mean = 0;
  for (double c : j.token_cos) mean += c / kT;
  EXPECT_GT(mean, 0.99);  // what a mean-cosine gate would have accepted
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::min_cos);
  EXPECT_EQ(j.min_cos_token, 17);
  EXPECT_EQ(j.worst_tokens.front().token, 17);
  EXPECT_EQ(j.worst_tokens.front().experts, (std::vector<std::int32_t>{3, 3}));
}

// Cosine is blind to magnitude: an output scaled by 1.05 keeps cos = 1 but breaks rel.
TEST(Judge, MagnitudeErrorFailsRelDespitePerfectCosine) {
  const auto r = reference();
  auto o = r;
  for (auto& v : o) v *= 1.05f;
  const Judgement j = judge(r, {}, as_output(o), kT, kH, th(), routing());
  EXPECT_NEAR(j.min_cos, 1.0, 1e-9);
  EXPECT_EQ(j.failed_check, Check::max_rel);
}

// The element band is relative to the REFERENCE: a band relative to the kernel's output would grow with a blown-up
// output (vLLM check_accuracy) and accept it.
TEST(Judge, ElementBandIsRelativeToTheReference) {
  const auto r = reference();
  auto o = r;
  o[5] = r[5] * 1.5f;  // one element 50% off: 1/8192 of elements, above the 1e-3 allowed? no: check the band itself
  Thresholds t = th();
  t.max_mismatch_fraction = 0.0;
  t.max_rel = 10; t.min_cos = 0;
  const Judgement j = judge(r, {}, as_output(o), kT, kH, t, routing());
  EXPECT_EQ(j.mismatches, 1);
  EXPECT_EQ(j.failed_check, Check::mismatch_fraction);
  ASSERT_FALSE(j.worst_elements.empty());
  EXPECT_EQ(j.worst_elements[0].token, 0);
  EXPECT_EQ(j.worst_elements[0].column, 5);
}

TEST(Judge, UnwrittenElementsAreCountedFromTheSentinel) {
  const auto r = reference();
  Tensor out = as_output(r);
  Tensor sent("s", DType::f32, {1});
  fill_sentinel(sent);
  for (std::int64_t c = 0; c < kH; ++c) out.span<float>()[(kT - 1) * kH + c] = sent.span<float>()[0];  // last token never written
  const Judgement j = judge(r, {}, out, kT, kH, th(), routing());
  EXPECT_EQ(j.unwritten, kH);
  EXPECT_EQ(j.failed_check, Check::unwritten);
}

TEST(Judge, NonFiniteOutputFails_NonFiniteReferenceIsAHarnessError) {
  auto r = reference();
  auto o = r;
  o[100] = INFINITY;
  EXPECT_EQ(judge(r, {}, as_output(o), kT, kH, th(), routing()).failed_check, Check::non_finite);
  r[3] = NAN;
  try {
    judge(r, {}, as_output(o), kT, kH, th(), routing());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::harness_error);
  }
}

TEST(Judge, AllZeroReferenceIsAHarnessError) {
  const std::vector<float> zeros(kT * kH, 0.0f);
  try {
    judge(zeros, {}, as_output(zeros), kT, kH, th(), routing());
    FAIL() << "a degenerate fixture must not pass";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::harness_error);
  }
}

TEST(Judge, AllZeroOutputFails) {
  const auto r = reference();
  const Judgement j = judge(r, {}, as_output(std::vector<float>(kT * kH, 0.0f)), kT, kH, th(), routing());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::zero_output);
}

// The norm of the reference, computed here independently of the judge: sqrt of the sum of squares of every element.
double naive_ref_norm(const std::vector<float>& r) {
  double s = 0;
  for (float v : r) s += double(v) * double(v);
  return std::sqrt(s);
}
Tensor filled(float v) { return as_output(std::vector<float>(kT * kH, v)); }
Tensor all_sentinel() {
  Tensor t("out", DType::f32, {kT, kH});
  fill_sentinel(t, 0);
  return t;
}

// An output that is all NaN, all Inf or never written is the kernel's failure, never the fixture's: the reference
// norm covers every reference element whatever the output holds, so no "all-zero reference" harness error.
TEST(Judge, AllNaNAllInfOrNeverWrittenOutputIsAFailedCaseNotAHarnessError) {
  const auto r = reference();
  struct Bad { const char* name; Tensor out; Check check; std::int64_t non_finite, unwritten; };
  Bad bad[] = {{"all NaN", filled(NAN), Check::non_finite, kT * kH, 0},
               {"all +Inf", filled(INFINITY), Check::non_finite, kT * kH, 0},
               {"all -Inf", filled(-INFINITY), Check::non_finite, kT * kH, 0},
               {"never written", all_sentinel(), Check::unwritten, 0, kT * kH}};
  for (const Bad& b : bad) {
    Judgement j;
    ASSERT_NO_THROW(j = judge(r, r, b.out, kT, kH, th(), routing())) << b.name;
    EXPECT_FALSE(j.pass) << b.name;
    EXPECT_EQ(j.failed_check, b.check) << b.name;
    EXPECT_EQ(j.non_finite, b.non_finite) << b.name;
    EXPECT_EQ(j.unwritten, b.unwritten) << b.name;
    EXPECT_NEAR(j.ref_norm, naive_ref_norm(r), 1e-9 * naive_ref_norm(r)) << b.name;
    // Every token is undefined, so is every metric of the output: none may look like a pass.
    EXPECT_TRUE(std::isnan(j.min_cos) && std::isnan(j.max_rel) && std::isnan(j.max_abs)) << b.name;
    EXPECT_TRUE(std::isnan(j.ideal_min_cos) && std::isnan(j.ideal_max_rel)) << b.name;
    for (std::int64_t t = 0; t < kT; ++t) ASSERT_TRUE(std::isnan(j.token_cos[t]) && std::isnan(j.token_rel[t])) << t;
    EXPECT_EQ(j.mismatches, kT * kH) << b.name;  // a NaN is outside any band around the reference
    EXPECT_EQ(j.worst_tokens.size(), 5u);
    EXPECT_EQ(j.worst_tokens[0].token, 0);
  }
}

TEST(Judge, ReferenceNormNeverDependsOnTheOutput) {
  const auto r = reference();
  auto o = r;
  for (std::int64_t i = 0; i < kT * kH; i += 3) o[i] = NAN;
  const double want = naive_ref_norm(r);
  EXPECT_NEAR(judge(r, {}, as_output(r), kT, kH, th(), routing()).ref_norm, want, 1e-9 * want);
  EXPECT_NEAR(judge(r, {}, as_output(o), kT, kH, th(), routing()).ref_norm, want, 1e-9 * want);
}

// One NaN element in an otherwise exact token: over the other 127 elements that token's cos is 1.0 to the last
// digit, which hid it. Its cos and rel are NaN, it is the worst token (ahead of a token that merely fails min_cos),
// and the case's min_cos / max_rel are NaN at that token.
TEST(Judge, ATokenWithANonFiniteOrUnwrittenElementHasNaNCosAndRelAndIsTheWorstToken) {
  const auto r = reference();
  auto o = r;
  for (std::int64_t c = 0; c < kH; c += 4) o[17 * kH + c] = 0.0f;  // token 17: cos ~0.87, rel ~0.5
  o[40 * kH + 9] = NAN;                                             // token 40: one NaN
  Tensor out = as_output(o);
  Tensor sent("s", DType::f32, {1});
  fill_sentinel(sent);
  out.span<float>()[52 * kH + 100] = sent.span<float>()[0];         // token 52: one element never written
  const Judgement j = judge(r, {}, out, kT, kH, th(), routing());
  EXPECT_EQ(j.failed_check, Check::unwritten);
  EXPECT_EQ(j.non_finite, 1);
  EXPECT_EQ(j.unwritten, 1);
  EXPECT_TRUE(std::isnan(j.token_cos[40]) && std::isnan(j.token_rel[40]));
  EXPECT_TRUE(std::isnan(j.token_cos[52]) && std::isnan(j.token_rel[52]));
  EXPECT_NEAR(j.token_cos[39], 1.0, 1e-12);
  EXPECT_TRUE(std::isnan(j.min_cos) && std::isnan(j.max_rel));
  EXPECT_EQ(j.min_cos_token, 40);
  EXPECT_EQ(j.max_rel_token, 40);
  ASSERT_GE(j.worst_tokens.size(), 3u);
  EXPECT_EQ(j.worst_tokens[0].token, 40);
  EXPECT_EQ(j.worst_tokens[0].non_finite, 1);
  EXPECT_EQ(j.worst_tokens[1].token, 52);
  EXPECT_EQ(j.worst_tokens[1].unwritten, 1);
  EXPECT_EQ(j.worst_tokens[2].token, 17);
  EXPECT_EQ(j.mismatches, 2 + 32);  // both bad elements and token 17's 32 zeroed ones
  ASSERT_GE(j.worst_elements.size(), 2u);
  EXPECT_EQ(j.worst_elements[0].token * kH + j.worst_elements[0].column, 40 * kH + 9);
  EXPECT_EQ(j.worst_elements[1].token * kH + j.worst_elements[1].column, 52 * kH + 100);
  EXPECT_NE(j.details().find("40: cos NaN, rel NaN"), std::string::npos) << j.details();
}

TEST(Judge, Bf16OutputsAreDecodedAndSentinelsAreBf16NaNs) {
  Tensor t("o", DType::bf16, {1, 2});
  fill_sentinel(t, 0);
  EXPECT_TRUE(std::isnan(element_as_f32(t, 0)));
  EXPECT_EQ(t.span<std::uint16_t>()[1], 0x7FA5);
  fill_sentinel(t, 1);
  EXPECT_EQ(t.span<std::uint16_t>()[1], 0xFFA5);
}


// The requantization band (docs/judging.md): T = 64 and band_fraction 1/32 allow max(1, ceil(64 / 32)) = 2 tokens
// below min_cos whose rel is at most band_factor * q_t, q_t = ||ideal_t - ref_t|| / ||ref_t||.
namespace {
double token_norm(const std::vector<float>& v, std::int64_t t) {
  double s = 0;
  for (std::int64_t c = 0; c < kH; ++c) s += double(v[t * kH + c]) * v[t * kH + c];
  return std::sqrt(s);
}
// Adds `rel` * ||ref_t|| along a +-1 pattern (period 2 * period_half columns) to token t of v.
void push(std::vector<float>& v, const std::vector<float>& ref, std::int64_t t, double rel, int period_half) {
  const double step = rel * token_norm(ref, t) / std::sqrt(double(kH));
  for (std::int64_t c = 0; c < kH; ++c) v[t * kH + c] += float(((c / period_half) % 2 ? 1 : -1) * step);
}
Thresholds band_th() {
  Thresholds t = th();
  t.max_rel = 0.1; t.atol = 1.0; t.max_mismatch_fraction = 1.0;
  t.band_factor = 1.0; t.band_fraction = 1.0 / 32.0;
  return t;
}
// ideal: every token 4 % away from the reference (the recipe's quantization noise q_t = 0.04).
std::vector<float> ideal_of(const std::vector<float>& r) {
  auto i = r;
  for (std::int64_t t = 0; t < kT; ++t) push(i, r, t, 0.04, 1);
  return i;
}
}  // namespace

TEST(JudgeBand, TwoTokensRequantizedWithinTheirNoisePass) {
  const auto r = reference(), ideal = ideal_of(r);
  auto o = r;
  for (std::int64_t t : {5, 40}) push(o, r, t, 0.02, 2);  // rel 0.02: 1 - cos = 2e-4 > 1e-4, half of q_t
  const Judgement j = judge(r, ideal, as_output(o), kT, kH, band_th(), routing());
  EXPECT_TRUE(j.pass) << j.summary;
  EXPECT_EQ(j.band_tokens, 2);
  EXPECT_EQ(j.band_allowance, 2);
  EXPECT_NEAR(j.band_max_ratio, 0.5, 1e-3);
  EXPECT_LT(j.min_cos, 0.9999);          // the reported min cos stays the true one
  EXPECT_GT(j.strict_min_cos, 0.99999);  // the other tokens
  ASSERT_EQ(j.token_noise.size(), std::size_t(kT));
  EXPECT_NEAR(j.token_noise[5], 0.04, 1e-4);
}

// max_rel judges the tokens outside the band too: a band token's rel (here 0.03, above max_rel 0.02) is bounded by
// its edge (2 x 0.04), not by max_rel, while the band holds; a third such token breaks the band and max_rel with it.
TEST(JudgeBand, MaxRelJudgesTheTokensOutsideTheBand) {
  const auto r = reference(), ideal = ideal_of(r);
  Thresholds t = band_th();
  t.max_rel = 0.02; t.band_factor = 2.0;
  auto o = r;
  for (std::int64_t tok : {5, 40}) push(o, r, tok, 0.03, 2);
  Judgement j = judge(r, ideal, as_output(o), kT, kH, t, routing());
  EXPECT_TRUE(j.pass) << j.summary;
  EXPECT_NEAR(j.max_rel, 0.03, 1e-4);  // the reported max rel stays the true one
  EXPECT_LT(j.strict_max_rel, 1e-6);
  push(o, r, 41, 0.03, 2);
  j = judge(r, ideal, as_output(o), kT, kH, t, routing());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::min_cos);  // min_cos fails first; max_rel judges every token again
  EXPECT_NEAR(j.strict_max_rel, 0.03, 1e-4);
  t.min_cos = 0.999;  // cos of rel 0.03 is about 1 - 4.5e-4: above this min_cos, so no band and max_rel fails
  j = judge(r, ideal, as_output(o), kT, kH, t, routing());
  EXPECT_EQ(j.failed_check, Check::max_rel);
  EXPECT_EQ(j.band_tokens, 0);
}

// The edge is capped at kBandEdgeMaxRel x max_rel whatever q_t is: a token whose ideal is far from a nearly-zero
// contract (q_t of 50 here) or not finite gives no licence for a large error.
TEST(JudgeBand, TheEdgeIsCappedAtTwiceMaxRelAndOffForANonFiniteIdeal) {
  const auto r = reference();
  auto ideal = ideal_of(r);
  for (std::int64_t c = 0; c < kH; ++c) ideal[5 * kH + c] = r[5 * kH + c] * 51.0f;  // q_5 = 50
  Thresholds t = band_th();
  t.max_rel = 0.02; t.band_factor = 2.0;
  auto o = r;
  push(o, r, 5, 0.039, 2);  // within 2 x max_rel = 0.04: inside the band
  Judgement j = judge(r, ideal, as_output(o), kT, kH, t, routing());
  EXPECT_TRUE(j.pass) << j.summary;
  EXPECT_EQ(j.band_tokens, 1);
  o = r;
  push(o, r, 5, 0.041, 2);  // above the cap, far below 2 q_5 = 100
  j = judge(r, ideal, as_output(o), kT, kH, t, routing());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.band_tokens, 0);
  ideal[5 * kH] = std::numeric_limits<float>::infinity();
  o = r;
  push(o, r, 5, 0.019, 2);  // cos below min_cos, rel below max_rel and any edge: no band without a finite q_5
  j = judge(r, ideal, as_output(o), kT, kH, t, routing());
  EXPECT_EQ(j.band_tokens, 0);
  EXPECT_EQ(j.failed_check, Check::min_cos);
}

TEST(JudgeBand, MoreTokensThanTheAllowanceFailMinCos) {
  const auto r = reference(), ideal = ideal_of(r);
  auto o = r;
  for (std::int64_t t : {5, 40, 41}) push(o, r, t, 0.02, 2);
  const Judgement j = judge(r, ideal, as_output(o), kT, kH, band_th(), routing());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::min_cos);
  EXPECT_EQ(j.band_tokens, 3);
  EXPECT_NE(j.summary.find("more than the 2"), std::string::npos) << j.summary;
}

TEST(JudgeBand, ATokenBeyondItsNoiseFailsAlone) {
  const auto r = reference(), ideal = ideal_of(r);
  auto o = r;
  push(o, r, 9, 0.05, 2);  // rel 0.05 > q_t 0.04
  const Judgement j = judge(r, ideal, as_output(o), kT, kH, band_th(), routing());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::min_cos);
  EXPECT_EQ(j.band_tokens, 0);
  EXPECT_EQ(j.min_cos_token, 9);
}

TEST(JudgeBand, OffWithoutAnIdealReferenceOrAFactor) {
  const auto r = reference(), ideal = ideal_of(r);
  auto o = r;
  push(o, r, 5, 0.02, 2);
  EXPECT_FALSE(judge(r, {}, as_output(o), kT, kH, band_th(), routing()).pass);
  Thresholds off = band_th();
  off.band_factor = 0;
  EXPECT_FALSE(judge(r, ideal, as_output(o), kT, kH, off, routing()).pass);
}

// A correct kernel's token requantized with another scale (its intermediate's amax crossed a rounding): the contract
// reference rounds every element of the token to the e4m3fn grid with scale s = amax / 448, the kernel with s * 1.01.
// Both are one rounding of the same ideal values, so the kernel's distance to the contract exceeds the token's own
// quantization noise q_t (two roundings, up to half a step each, in opposite directions) but stays within 2 q_t.
namespace {
float e4m3fn_rounded(float v) {  // nearest e4m3fn value, ties to even (3 mantissa bits, min normal 2^-6, max 448)
  if (v == 0.0f) return 0.0f;
  const int e = std::max(int(std::floor(std::log2(std::fabs(v)))), -6);
  const float step = std::ldexp(1.0f, e - 3);
  return std::clamp(std::nearbyint(v / step) * step, -448.0f, 448.0f);
}
std::vector<float> requantized(const std::vector<float>& v, std::int64_t t, float scale_factor) {
  auto q = v;
  float amax = 0;
  for (std::int64_t c = 0; c < kH; ++c) amax = std::max(amax, std::fabs(v[t * kH + c]));
  const float s = amax / 448.0f * scale_factor;
  for (std::int64_t c = 0; c < kH; ++c) q[t * kH + c] = e4m3fn_rounded(v[t * kH + c] / s) * s;
  return q;
}
}  // namespace

TEST(JudgeBand, ATokenRequantizedWithAnotherScalePassesTheDefaultBand) {
  const auto ideal = reference();
  const std::int64_t t = 5;
  const auto r = requantized(ideal, t, 1.0f), o = requantized(ideal, t, 1.01f);
  const double q = token_norm([&] { auto d = ideal; for (std::size_t i = 0; i < d.size(); ++i) d[i] -= r[i]; return d; }(), t) /
                   token_norm(r, t);
  const double rel = token_norm([&] { auto d = o; for (std::size_t i = 0; i < d.size(); ++i) d[i] -= r[i]; return d; }(), t) /
                     token_norm(r, t);
  EXPECT_GT(rel, q);        // beyond one rounding's noise: a band of 1 x q_t would fail this correct kernel
  EXPECT_LT(rel, 2.0 * q);  // within the triangle inequality's 2 q_t
  Thresholds d = band_th();
  d.band_factor = kBandFactor;
  const Judgement j = judge(r, ideal, as_output(o), kT, kH, d, routing());
  EXPECT_TRUE(j.pass) << j.summary;
  EXPECT_EQ(j.band_tokens, 1);
  EXPECT_LT(j.min_cos, 0.9999);  // judged by the band, not above min_cos
}

// Which schemes get the band: every dynamic activation format, never bf16 activations or the exact tier.
TEST(JudgeBand, DefaultsOnDynamicActivationSchemesOnly) {
  ProblemSpec p;
  EXPECT_EQ(default_thresholds(p, Tier::statistical).band_factor, 0.0);
  p.quant.act = ActFormat::fp8_token;
  EXPECT_EQ(default_thresholds(p, Tier::statistical).band_factor, kBandFactor);
  EXPECT_EQ(default_thresholds(p, Tier::exact).band_factor, 0.0);
}
}  // namespace moe

namespace moe {

// Routing edge cases give tokens whose reference is exactly 0 (every slot masked or zero-weighted): there a
// relative error divides by the floor and passes a tiny output, so such a token allows no error at all.
TEST(Judge, ZeroReferenceTokensAllowNoErrorWhenTheCaseExpectsThem) {
  std::vector<float> r = reference();
  for (std::int64_t c = 0; c < kH; ++c) r[5 * kH + c] = 0.0f;  // token 5: every slot masked
  Thresholds t = th();
  t.zero_reference_expected = true;
  EXPECT_TRUE(judge(r, {}, as_output(r), kT, kH, t, routing()).pass);
  std::vector<float> o = r;
  o[5 * kH + 7] = 1e-9f;  // rel 1e-9 / floor 1e-6 = 1e-3 would pass max_rel 0.01
  const Judgement j = judge(r, {}, as_output(o), kT, kH, t, routing());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::max_rel);
  EXPECT_NE(j.summary.find("token 5: the reference is exactly 0"), std::string::npos) << j.summary;
  t.zero_reference_expected = false;  // today's judging of the same output: within tolerance
  EXPECT_TRUE(judge(r, {}, as_output(o), kT, kH, t, routing()).pass);
}

TEST(Judge, AnAllZeroReferenceIsAHarnessErrorUnlessTheCaseExpectsIt) {
  const std::vector<float> r(kT * kH, 0.0f);
  Thresholds t = th();
  EXPECT_THROW(judge(r, {}, as_output(r), kT, kH, t, routing()), Error);
  t.zero_reference_expected = true;
  EXPECT_TRUE(judge(r, {}, as_output(r), kT, kH, t, routing()).pass);
  std::vector<float> o = r;
  o[0] = -1e-30f;
  EXPECT_EQ(judge(r, {}, as_output(o), kT, kH, t, routing()).failed_check, Check::max_rel);
}

}  // namespace moe
