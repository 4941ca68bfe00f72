// How the judge consumes the band's explanation test (docs/judging.md "The band's explanation test"): a token the
// band's rule takes stays in the band only if the explainer explains it; a rejected one is judged by min_cos like
// any token, with the reason naming it; the counts and the worst ratio are reported; without an explainer the
// details say the test did not run. The mismatch fraction judges the tokens outside the band, and a token with
// elements outside the tolerance joins the band by the same test (inside the edge, explained, within the
// allowance). The doc's constants are the code's.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "reference/moe/band_explain.hpp"
#include "verdict/judge.hpp"

namespace moe {
namespace {

constexpr std::int64_t kT = 8, kH = 64;

// Token t's row: 1 + (c % 7) / 7; the ideal differs by 4 % of the row's norm (q_t = 0.04) along the alternating signs.
std::vector<float> reference() {
  std::vector<float> r(std::size_t(kT * kH));
  for (std::int64_t i = 0; i < kT * kH; ++i) r[std::size_t(i)] = 1.0f + float(i % kH % 7) / 7.0f;
  return r;
}
double row_norm(const std::vector<float>& v, std::int64_t t) {
  double s = 0;
  for (std::int64_t c = 0; c < kH; ++c) s += double(v[std::size_t(t * kH + c)]) * v[std::size_t(t * kH + c)];
  return std::sqrt(s);
}
// v's token t plus rel x its norm along the alternating-sign direction made orthogonal to the row.
void push(std::vector<float>& v, const std::vector<float>& r, std::int64_t t, double rel) {
  std::vector<double> d(kH);
  double dot = 0, rr = 0;
  for (std::int64_t c = 0; c < kH; ++c) d[c] = c % 2 ? -1.0 : 1.0, dot += d[c] * r[t * kH + c], rr += double(r[t * kH + c]) * r[t * kH + c];
  double dd = 0;
  for (std::int64_t c = 0; c < kH; ++c) d[c] -= dot / rr * r[t * kH + c], dd += d[c] * d[c];
  for (std::int64_t c = 0; c < kH; ++c) v[t * kH + c] = float(r[t * kH + c] + rel * row_norm(r, t) * d[c] / std::sqrt(dd));
}
// The ideal reference of these tests: every token of r moved by rel 0.04 (q_t = 0.04, the band's edge 0.08).
std::vector<float> ideal_of(const std::vector<float>& r) {
  auto ideal = r;
  for (std::int64_t t = 0; t < kT; ++t) push(ideal, r, t, 0.04);
  return ideal;
}
Tensor as_output(const std::vector<float>& v) {
  Tensor t("out", DType::f32, {kT, kH});
  auto s = t.span<float>();
  std::copy(v.begin(), v.end(), s.begin());
  return t;
}
Thresholds band_th() {
  Thresholds t;
  t.min_cos = 0.9999;
  t.max_rel = 0.05;
  t.band_factor = 2.0;
  t.band_allowance = 1;
  t.atol = 1.0;  // the element band is not what these tests are about
  t.max_mismatch_fraction = 1.0;
  return t;
}
RoutingResult routing() {
  RoutingResult r;
  r.tokens = kT;
  r.k = 1;
  r.ids.assign(kT, 0);
  r.weights.assign(kT, 1.0f);
  return r;
}
// An explainer answering `ratio` for every token, recording which tokens and error norms it was asked about.
struct Fake {
  double ratio;
  std::vector<std::int64_t> asked;
  std::vector<double> norms;
  BandExplainer fn() {
    return [this](std::int64_t t, const std::vector<double>& e) {
      asked.push_back(t);
      double s = 0;
      for (double v : e) s += v * v;
      norms.push_back(std::sqrt(s));
      BandExplanation x;
      x.tested = true;
      x.ratio = ratio;
      x.explained = ratio <= kExplainMaxRatio;
      x.hidden = kH;
      return x;
    };
  }
};

TEST(JudgeBandExplain, AnExplainedTokenStaysInTheBandAndARejectedOneFailsMinCos) {
  const auto r = reference();
  const auto ideal = ideal_of(r);
  auto o = r;
  push(o, r, 3, 0.03);  // 1 - cos = 4.5e-4 > 1e-4; rel 0.03 <= 2 x 0.04: inside the band's edge
  Fake yes{0.5, {}, {}}, no{12.0, {}, {}};
  Judgement j = judge(r, ideal, as_output(o), kT, kH, band_th(), routing(), yes.fn());
  EXPECT_TRUE(j.pass) << j.summary;
  EXPECT_EQ(yes.asked, std::vector<std::int64_t>{3});  // only the band's token is tested
  EXPECT_NEAR(yes.norms[0], 0.03 * row_norm(r, 3), 1e-5);  // the error handed over is out - contract
  EXPECT_EQ(j.band_tokens, 1);
  EXPECT_EQ(j.band_explained, 1);
  EXPECT_EQ(j.band_rejected, 0);
  j = judge(r, ideal, as_output(o), kT, kH, band_th(), routing(), no.fn());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::min_cos);
  EXPECT_EQ(j.band_tokens, 0);
  EXPECT_EQ(j.band_rejected, 1);
  EXPECT_DOUBLE_EQ(j.band_explain_ratio, 12.0);
  EXPECT_NE(j.summary.find("token 3 (cos"), std::string::npos) << j.summary;
  EXPECT_NE(j.summary.find("is not a requantization difference (residual 12.0 x the contract noise, limit 3)"),
            std::string::npos) << j.summary;
  EXPECT_NE(j.details().find("1 rejected as not a requantization difference"), std::string::npos) << j.details();
}

TEST(JudgeBandExplain, WithoutAnExplainerTheBandsRuleAloneDecidesAndSaysSo) {
  const auto r = reference();
  const auto ideal = ideal_of(r);
  auto o = r;
  push(o, r, 3, 0.03);
  const Judgement j = judge(r, ideal, as_output(o), kT, kH, band_th(), routing());
  EXPECT_TRUE(j.pass);
  EXPECT_FALSE(j.band_explain_run);
  EXPECT_NE(j.details().find("band explanation: not run"), std::string::npos) << j.details();
}

// v's token t with `n` elements (columns 0, 2, 4, ...) moved by +d each.
void bump(std::vector<float>& v, std::int64_t t, int n, float d) {
  for (int i = 0; i < n; ++i) v[std::size_t(t * kH + 2 * i)] += d;
}
// The element tolerance of these tests: atol 0.05, no rtol, at most 2 of the 512 elements outside it.
Thresholds mismatch_th() {
  Thresholds t = band_th();
  t.min_cos = 0.999;  // a token with 4 elements moved by 0.1 (1 - cos about 1.5e-4) passes min_cos
  t.atol = 0.05;
  t.rtol = 0.0;
  t.max_mismatch_fraction = 2.0 / double(kT * kH);
  t.band_elements = true;  // the envelope's members leave the tolerance themselves
  return t;
}

TEST(JudgeMismatchBand, ATokenInsideTheEdgeAndExplainedJoinsTheBandAndItsElementsDoNotCount) {
  const auto r = reference();
  const auto ideal = ideal_of(r);
  auto o = r;
  bump(o, 3, 4, 0.1f);  // 4 of 512 elements outside atol 0.05; rel 0.2 / ||row|| (about 0.017) <= 2 x 0.04
  Fake yes{0.5, {}, {}}, no{12.0, {}, {}};
  Judgement j = judge(r, ideal, as_output(o), kT, kH, mismatch_th(), routing(), yes.fn());
  EXPECT_TRUE(j.pass) << j.summary;
  EXPECT_EQ(yes.asked, std::vector<std::int64_t>{3});
  EXPECT_DOUBLE_EQ(j.mismatch_fraction, 4.0 / 512.0);
  EXPECT_DOUBLE_EQ(j.strict_mismatch_fraction, 0.0);
  EXPECT_EQ(j.mismatch_band_tokens, 1);
  EXPECT_EQ(j.band_tokens, 0);  // not below min_cos: not the cos rule's band token
  EXPECT_NE(j.details().find("1 token(s) with elements outside the tolerance joined the band"), std::string::npos)
      << j.details();
  j = judge(r, ideal, as_output(o), kT, kH, mismatch_th(), routing(), no.fn());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::mismatch_fraction);
  EXPECT_DOUBLE_EQ(j.strict_mismatch_fraction, 4.0 / 512.0);
  EXPECT_EQ(j.mismatch_band_tokens, 0);
  EXPECT_EQ(j.band_rejected, 1);
  // Without an explainer the band's rule alone decides, as for the cos rule's tokens.
  j = judge(r, ideal, as_output(o), kT, kH, mismatch_th(), routing());
  EXPECT_TRUE(j.pass) << j.summary;
  EXPECT_NE(j.details().find("band explanation: not run"), std::string::npos) << j.details();
  // Where the envelope's members never left the tolerance, every element counts and nothing is asked.
  Thresholds th = mismatch_th();
  th.band_elements = false;
  Fake asked{0.5, {}, {}};
  j = judge(r, ideal, as_output(o), kT, kH, th, routing(), asked.fn());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::mismatch_fraction);
  EXPECT_TRUE(asked.asked.empty());
  EXPECT_DOUBLE_EQ(j.strict_mismatch_fraction, 4.0 / 512.0);
}

TEST(JudgeMismatchBand, TokensJoinMostElementsFirstOnlyWhileOverTheLimitAndWithinTheAllowance) {
  const auto r = reference();
  const auto ideal = ideal_of(r);
  auto o = r;
  bump(o, 5, 4, 0.1f);
  bump(o, 3, 4, 0.1f);
  bump(o, 6, 1, 0.1f);
  Fake yes{0.5, {}, {}};
  // Allowance 1: token 3 (4 elements, the first of the two largest) joins; token 5's 4 and token 6's 1 count.
  Judgement j = judge(r, ideal, as_output(o), kT, kH, mismatch_th(), routing(), yes.fn());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::mismatch_fraction);
  EXPECT_EQ(yes.asked, std::vector<std::int64_t>{3});
  EXPECT_EQ(j.mismatch_band_tokens, 1);
  EXPECT_DOUBLE_EQ(j.mismatch_fraction, 9.0 / 512.0);
  EXPECT_DOUBLE_EQ(j.strict_mismatch_fraction, 5.0 / 512.0);
  EXPECT_NE(j.summary.find("over the tokens outside the requantization band (1.758e-02 over every token)"),
            std::string::npos) << j.summary;
  // Allowance 3: tokens 3 and 5 join; then 1 element of 512 is within the limit and token 6 is not asked about.
  Thresholds th = mismatch_th();
  th.band_allowance = 3;
  Fake yes3{0.5, {}, {}};
  j = judge(r, ideal, as_output(o), kT, kH, th, routing(), yes3.fn());
  EXPECT_TRUE(j.pass) << j.summary;
  EXPECT_EQ(yes3.asked, (std::vector<std::int64_t>{3, 5}));
  EXPECT_EQ(j.mismatch_band_tokens, 2);
  EXPECT_DOUBLE_EQ(j.strict_mismatch_fraction, 1.0 / 512.0);
}

TEST(JudgeMismatchBand, ATokenBeyondTheEdgeNeverJoins) {
  const auto r = reference();
  const auto ideal = ideal_of(r);
  auto o = r;
  bump(o, 3, 4, 0.6f);  // rel 1.2 / ||row|| (about 0.10) > the edge 2 x 0.04
  Thresholds th = mismatch_th();
  th.min_cos = 0.99;
  th.max_rel = 0.2;
  Fake yes{0.5, {}, {}};
  const Judgement j = judge(r, ideal, as_output(o), kT, kH, th, routing(), yes.fn());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::mismatch_fraction);
  EXPECT_TRUE(yes.asked.empty());
  EXPECT_DOUBLE_EQ(j.strict_mismatch_fraction, 4.0 / 512.0);
}

TEST(JudgeMismatchBand, TheElementsOfABandThatHoldsDoNotCount) {
  const auto r = reference();
  const auto ideal = ideal_of(r);
  auto o = r;
  push(o, r, 3, 0.03);  // below min_cos 0.9999, inside the edge: the cos rule's band token
  Thresholds th = mismatch_th();
  th.min_cos = 0.9999;
  th.atol = 0.02;  // each of token 3's 64 elements moved by about 0.03 x ||row|| / 8 (0.04) leaves it
  Fake yes{0.5, {}, {}};
  Judgement j = judge(r, ideal, as_output(o), kT, kH, th, routing(), yes.fn());
  EXPECT_TRUE(j.pass) << j.summary;
  EXPECT_EQ(j.band_tokens, 1);
  EXPECT_EQ(j.mismatch_band_tokens, 0);
  EXPECT_DOUBLE_EQ(j.mismatch_fraction, 64.0 / 512.0);
  EXPECT_DOUBLE_EQ(j.strict_mismatch_fraction, 0.0);
  // Without the envelope's licence the band still holds for min_cos, and its token's elements count.
  th.band_elements = false;
  j = judge(r, ideal, as_output(o), kT, kH, th, routing(), yes.fn());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::mismatch_fraction);
  EXPECT_EQ(j.band_tokens, 1);
  EXPECT_DOUBLE_EQ(j.strict_mismatch_fraction, 64.0 / 512.0);
  th.band_elements = true;
  // Two such tokens with allowance 1: the band does not hold, and every element counts.
  push(o, r, 6, 0.03);
  j = judge(r, ideal, as_output(o), kT, kH, th, routing(), yes.fn());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, Check::min_cos);
  EXPECT_DOUBLE_EQ(j.strict_mismatch_fraction, 128.0 / 512.0);
}

// docs/judging.md states the test's constants; each must be the code's.
TEST(JudgeBandExplain, TheDocumentedConstantsAreTheCodes) {
  std::ifstream f(std::string(MOE_DOCS_DIR) + "/judging.md");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  const auto at = doc.find("## The band's explanation test");
  ASSERT_NE(at, std::string::npos);
  const std::string sec = doc.substr(at, doc.find("\n## ", at + 4) - at);
  const std::pair<const char*, double> constants[] = {
      {"kExplainMaxRatio", kExplainMaxRatio}, {"kExplainMaxSteps", kExplainMaxSteps},
      {"kExplainSigmas", kExplainSigmas}, {"kExplainRoundingUlps", kExplainRoundingUlps},
      {"kExplainScaleSteps", double(kExplainScaleSteps)}};
  for (const auto& [name, value] : constants) {
    std::smatch m;
    const std::regex re(std::string("`") + name + "`( =)? ([0-9.]+)");
    ASSERT_TRUE(std::regex_search(sec, m, re)) << name << " is not stated in the section";
    EXPECT_DOUBLE_EQ(std::stod(m[2].str()), value) << name;
  }
}

}  // namespace
}  // namespace moe
