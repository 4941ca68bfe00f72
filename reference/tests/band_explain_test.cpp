// The requantization band's explanation test (reference/moe/band_fit.hpp, band_explain.hpp): an error that is one
// flipped code of the intermediate is explained; an error of the same size in a direction no flip or scale takes
// is not; a coefficient is bounded to about one code step. Expected values are computed here by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "fixtures/checkpoint.hpp"
#include "formats/bf16.hpp"
#include "reference/moe/band_explain.hpp"
#include "reference/moe/band_fit.hpp"
#include "reference/moe/ensemble.hpp"
#include "reference/moe/reference_moe.hpp"

namespace moe {
namespace {

// Two flip columns in R^4 and a noise of 0.1 (four variances of 0.0025).
BandColumns two_columns() {
  BandColumns c;
  c.b.resize(4, 2);
  c.b.col(0) << 2, 0, 0, 0;
  c.b.col(1) << 0, 1, 1, 0;
  c.col = {{"a"}, {"b"}};
  c.noise_var = Eigen::VectorXd::Constant(4, 0.0025);
  return c;
}

TEST(BandFit, AFlipColumnIsExplainedAndAnOrthogonalErrorOfTheSameNormIsNot) {
  const BandColumns c = two_columns();
  Eigen::VectorXd e(4);
  e << 2, 0, 0, 0;  // exactly column a, one step
  BandExplanation x = fit_band_error(c, e);
  EXPECT_TRUE(x.explained);
  EXPECT_TRUE(x.decisive);  // sqrt(1 - 2/4) * 2 / 0.1 = 14.1 > 3
  EXPECT_NEAR(x.ratio, 0.0, 1e-6);
  EXPECT_NEAR(x.noise, 0.1, 1e-12);
  EXPECT_NEAR(x.max_coef, 1.0, 1e-9);  // the ridge of 1e-10 on unit columns
  e << 0, std::sqrt(2.0), -std::sqrt(2.0), 0;  // norm 2, orthogonal to both columns: nothing is explained
  x = fit_band_error(c, e);
  EXPECT_FALSE(x.explained);
  EXPECT_NEAR(x.ratio, 20.0, 1e-9);  // ||e|| / noise = 2 / 0.1
}

TEST(BandFit, ACoefficientIsBoundedToAboutOneCodeStep) {
  const BandColumns c = two_columns();
  Eigen::VectorXd e(4);
  e << 0, 3, 3, 0;  // three steps of column b: held at 1.5, the rest (1.5 x (0, 1, 1, 0)) is unexplained
  const BandExplanation x = fit_band_error(c, e);
  EXPECT_FALSE(x.explained);
  EXPECT_NEAR(x.ratio, 1.5 * std::sqrt(2.0) / 0.1, 1e-9);
  EXPECT_NEAR(x.max_coef, kExplainMaxSteps, 1e-12);
}

TEST(BandFit, ASmallErrorIsExplainedButNotDecisive) {
  const BandColumns c = two_columns();
  Eigen::VectorXd e(4);
  e << 0, 0, 0, 0.1;  // orthogonal, but the size of the noise: ratio 1
  const BandExplanation x = fit_band_error(c, e);
  EXPECT_TRUE(x.explained);
  EXPECT_NEAR(x.ratio, 1.0, 1e-9);
  EXPECT_FALSE(x.decisive);  // sqrt(1/2) x 0.1 / 0.1 = 0.71 <= 3
}

TEST(BandFit, OneScaleScenarioPerGroupIsUsed) {
  BandColumns c = two_columns();
  c.b.conservativeResize(4, 4);
  c.b.col(2) << 0, 0, 0, 1;
  c.b.col(3) << 0, 0, 0, 2;  // the same group's other amax, collinear here
  c.col.push_back({"s1", kExplainMaxSteps, 0});
  c.col.push_back({"s2", kExplainMaxSteps, 0});
  Eigen::VectorXd e(4);
  e << 2, 0, 0, 1;
  const BandExplanation x = fit_band_error(c, e);
  EXPECT_EQ(x.scale_columns, 1);
  EXPECT_NEAR(x.ratio, 0.0, 1e-6);
}

// One expert, one token, bf16 weights, per-token fp8 intermediate (qmax 448), f32 output: the contract by hand.
struct Hand {
  ProblemSpec p;
  Checkpoint c;
  RoutingResult r;
  std::vector<double> w2col;  // W2[:, i]
  double step = 0;            // the flipped code's change, in intermediate units
  std::int64_t i = -1;
};
double e4m3_spacing(double code) {  // the gap above |code| on the e4m3 grid (normal codes, below 448)
  return std::ldexp(1.0, int(std::floor(std::log2(std::fabs(code)))) - 3);
}
double e4m3_round(double v) {  // round to nearest even on the e4m3fn grid, saturating at 448
  const double a = std::fabs(v);
  const double sp = a < 0x1p-6 ? 0x1p-9 : std::ldexp(1.0, int(std::floor(std::log2(a))) - 3);
  return std::copysign(std::min(448.0, std::nearbyint(a / sp) * sp), v);
}
// The one token's intermediate of a 64 x 32 expert by hand: its input row quantized per token (amax / 448), stage 1
// with W13 [2I, H] (gate rows, then up rows) as w13(row, k) gives it, silu(g) * u rounded to bf16.
std::vector<double> hand_intermediate(const Checkpoint& c, const std::function<double(int, int)>& w13) {
  const auto x = c.x.span<std::uint16_t>();
  std::vector<double> xq(64), zr(32);
  double xmax = 0;
  for (int k = 0; k < 64; ++k) xmax = std::max(xmax, std::fabs(double(bf16_to_f32(x[k]))));
  for (int k = 0; k < 64; ++k) xq[k] = e4m3_round(bf16_to_f32(x[k]) / (xmax / 448)) * (xmax / 448);
  for (int i = 0; i < 32; ++i) {
    double g = 0, u = 0;
    for (int k = 0; k < 64; ++k) g += xq[k] * w13(i, k), u += xq[k] * w13(32 + i, k);
    zr[i] = round_to_bf16(float(g / (1 + std::exp(-g)) * u));
  }
  return zr;
}
Hand hand_case() {
  for (std::uint64_t seed = 1; seed < 64; ++seed) {
    Hand h;
    ProblemSpec& p = h.p;
    p.hidden = 64; p.inter = 32; p.experts = 1; p.topk = 1; p.tokens = 1;
    p.quant.act = ActFormat::fp8_token;
    p.intermediate = IntermediateDtype::bf16;
    p.output_dtype = DType::f32;
    p.seed = seed;
    h.c = generate_checkpoint(p);
    h.r = route(p, h.c);
    const auto w13 = h.c.routed.w13.span<std::uint16_t>();  // [1, 2I, H], gate rows then up rows
    const std::vector<double> zr =
        hand_intermediate(h.c, [&](int row, int k) { return double(bf16_to_f32(w13[row * 64 + k])); });
    double amax = 0;
    for (double z : zr) amax = std::max(amax, std::fabs(z));
    const double scale = amax / 448;
    // An element (not the amax) whose code boundary lies within half a bf16 ulp of its value.
    for (int i = 0; i < 32; ++i) {
      const double v = zr[i] / scale;
      if (std::fabs(zr[i]) == amax || std::fabs(v) < 16) continue;
      const double sp = e4m3_spacing(v), code = std::nearbyint(v / sp) * sp;
      const double mid = code + std::copysign(sp / 2, v - code);
      const double ulp = std::ldexp(1.0, int(std::floor(std::log2(std::fabs(zr[i])))) - 7);
      if (std::fabs(mid - v) * scale > ulp / 2 || std::fabs(code) >= 448 || std::fabs(code) == 16) continue;
      h.i = i;
      h.step = (mid > code ? sp : -sp) * scale;
      const auto w2 = h.c.routed.w2.span<std::uint16_t>();  // [1, H, I]
      for (int row = 0; row < 64; ++row) h.w2col.push_back(bf16_to_f32(w2[row * 32 + i]));
      return h;
    }
  }
  return {};
}

TEST(BandExplain, OneFlippedCodeIsExplainedAndAnOrthogonalErrorOfTheSameNormIsNot) {
  const Hand h = hand_case();
  ASSERT_GE(h.i, 0) << "no element near a code boundary in 63 seeds";
  const Values ref = reference_moe(h.p, h.c, h.r, ReferenceKind::contract);
  const double w = h.r.weights[0];
  std::vector<double> e(64);
  for (int c = 0; c < 64; ++c) e[c] = w * h.step * h.w2col[c];
  const BandExplanation flip = explain_band_token(h.p, h.c, h.r, 0, ref.data(), e);
  EXPECT_TRUE(flip.explained);
  EXPECT_TRUE(flip.decisive);
  EXPECT_LT(flip.ratio, 0.01);
  EXPECT_NEAR(flip.max_coef, 1.0, 1e-3);
  // The alternating-sign vector less its projections on W2[:, i] and the reference row, at the flip's norm.
  std::vector<double> o(64), col(h.w2col), r(ref.begin(), ref.begin() + 64);
  for (int c = 0; c < 64; ++c) o[c] = c % 2 ? -1.0 : 1.0;
  for (auto* v : {&col, &r}) {
    double dv = 0, vv = 0;
    for (int c = 0; c < 64; ++c) dv += o[c] * (*v)[c], vv += (*v)[c] * (*v)[c];
    for (int c = 0; c < 64; ++c) o[c] -= dv / vv * (*v)[c];
  }
  double on = 0, en = 0;
  for (int c = 0; c < 64; ++c) on += o[c] * o[c], en += e[c] * e[c];
  for (double& v : o) v *= std::sqrt(en / on);
  const BandExplanation orth = explain_band_token(h.p, h.c, h.r, 0, ref.data(), o);
  EXPECT_FALSE(orth.explained);
  EXPECT_GT(orth.ratio, kExplainMaxRatio);
}

}  // namespace
}  // namespace moe

namespace moe {
namespace {

// What a correct kernel does differently, as the envelope's members model it (reference/moe/ensemble.hpp), must be
// explained: on the Qwen3.5 TP4 shape (16 tokens, 64 experts) with fp8 per-token activations and declared
// accum=mma14, every member token below min_cos (0.9998) is tested, whatever its rel, and none is rejected. (With
// exact fp32 accumulation the members move no token below min_cos: nothing to test there.)
struct Tally { int tested = 0, rejected = 0; double worst = 0; };
Tally explain_members(int accum_bits, std::uint64_t seed) {
  ProblemSpec p;
  p.hidden = 2048; p.inter = 512; p.tp = 4; p.experts = 64; p.topk = 8; p.tokens = 16;
  p.n_shared = 1; p.shared_inter = 512;
  p.quant.weight = WeightFormat::fp8_channel;
  p.quant.act = ActFormat::fp8_token;
  p.shared_quant = p.quant;
  p.accum_bits = accum_bits;
  p.seed = seed;
  const Checkpoint c = generate_checkpoint(p);
  const RoutingResult r = route(p, c);
  const Values ref = reference_moe(p, c, r, ReferenceKind::contract);
  EnsembleSpec e;
  e.seed = seed;
  e.tokens = ensemble_tokens(p.tokens);
  Tally t;
  for (const Values& m : reference_ensemble(p, c, r, e))
    for (std::int64_t tok = 0; tok < p.tokens; ++tok) {
      double dot = 0, rr = 0, mm = 0;
      std::vector<double> err(2048);
      for (int col = 0; col < 2048; ++col) {
        const double a = ref[tok * 2048 + col], b = m[tok * 2048 + col];
        dot += a * b, rr += a * a, mm += b * b, err[col] = b - a;
      }
      if (dot / std::sqrt(rr * mm) >= 0.9998) continue;
      const BandExplanation x = explain_band_token(p, c, r, tok, ref.data() + tok * 2048, err);
      ++t.tested;
      t.rejected += !x.explained;
      t.worst = std::max(t.worst, x.ratio);
    }
  return t;
}

TEST(BandExplain, TheEnvelopesMembersAreExplained) {
  const Tally t = explain_members(14, 3);
  EXPECT_GT(t.tested, 0);  // the matrix units' truncation moves some token's scale
  EXPECT_EQ(t.rejected, 0) << t.tested << " tested, worst ratio " << t.worst;
  std::printf("%d member tokens below min_cos tested, %d rejected, worst ratio %.2f\n", t.tested, t.rejected, t.worst);
}

}  // namespace
}  // namespace moe

namespace moe {
namespace {

// slot_scale_steps (the systematic maxima's explanation) against a hand computation: one expert, one token, fp8
// per-channel weights (e4m3 codes times their row's f32 scale, decoded here), fp8 per-token activations, a bf16
// intermediate. Its steps are the intermediate's requantization with the amax element moved to the nearest bf16
// value each way that changes a code, times the router weight and W2.
double e4m3_decode(std::uint8_t b) {
  const int e = (b >> 3) & 15, m = b & 7;
  const double v = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1 + m / 8.0, e - 7);
  return b & 0x80 ? -v : v;
}
struct Steps {
  ProblemSpec p;
  Checkpoint c;
  RoutingResult r;
  std::vector<std::vector<double>> expected;  // up (nearest first), then down
};
Steps hand_steps(int accum_bits) {
  Steps s;
  ProblemSpec& p = s.p;
  p.hidden = 64; p.inter = 32; p.experts = 1; p.topk = 1; p.tokens = 1;
  p.quant.weight = WeightFormat::fp8_channel;
  p.quant.act = ActFormat::fp8_token;
  p.intermediate = IntermediateDtype::bf16;
  p.output_dtype = DType::f32;
  p.accum_bits = accum_bits;
  p.seed = 5;
  s.c = generate_checkpoint(p);
  s.r = route(p, s.c);
  const auto w13 = s.c.routed.w13.span<std::uint8_t>(), w2 = s.c.routed.w2.span<std::uint8_t>();
  const auto s13 = s.c.routed.w13_scale.span<float>(), s2 = s.c.routed.w2_scale.span<float>();
  const std::vector<double> zr =
      hand_intermediate(s.c, [&](int row, int k) { return e4m3_decode(w13[row * 64 + k]) * s13[row]; });
  int arg = 0;
  for (int i = 1; i < 32; ++i) arg = std::fabs(zr[i]) > std::fabs(zr[arg]) ? i : arg;
  auto requant = [](std::vector<double> z) {
    double amax = 0;
    for (double v : z) amax = std::max(amax, std::fabs(v));
    const double scale = double(float(amax) / 448.0f);
    for (double& v : z) v = e4m3_round(v / scale) * scale;
    return z;
  };
  const std::vector<double> zq = requant(zr);
  const double w = s.r.weights[0];
  for (int dir : {1, -1}) {
    std::uint16_t b = bf16_from_f32(float(std::fabs(zr[arg])));
    std::vector<double> last = zq;
    for (int walk = 0, found = 0; walk < 256 && found < kStepExplainSteps; ++walk) {
      b = std::uint16_t(b + dir);
      std::vector<double> z(zr);
      z[arg] = std::copysign(double(bf16_to_f32(b)), zr[arg]);
      const std::vector<double> q = requant(z);
      bool changed = false, differs = false;  // from the reference's codes; from the last one taken
      for (int i = 0; i < 32; ++i) changed |= i != arg && q[i] != zq[i], differs |= i != arg && q[i] != last[i];
      if (!changed || !differs) continue;
      last = q;
      ++found;
      std::vector<double> d(64, 0.0);
      for (int row = 0; row < 64; ++row)
        for (int i = 0; i < 32; ++i) d[row] += w * e4m3_decode(w2[row * 32 + i]) * s2[row] * (q[i] - zq[i]);
      s.expected.push_back(d);
    }
  }
  return s;
}

TEST(BandExplain, SlotScaleStepsAreTheNearestRequantizationEachWay) {
  // Four significand bits of accumulation: the declared error reaches well past one bf16 step of the amax.
  const Steps s = hand_steps(4);
  ASSERT_EQ(s.expected.size(), 2u * kStepExplainSteps);
  const auto got = slot_scale_steps(s.p, s.c, s.r, 0, 0);
  ASSERT_EQ(got.size(), s.expected.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].size(), 64u);
    double diff = 0, norm = 0;
    for (int c = 0; c < 64; ++c) diff += std::pow(got[k][c] - s.expected[k][c], 2), norm += std::pow(s.expected[k][c], 2);
    EXPECT_GT(norm, 0);
    EXPECT_LT(std::sqrt(diff / norm), 1e-5) << "step " << k;
  }
  EXPECT_EQ(slot_scale_steps(s.p, s.c, s.r, 0, -1).size(), got.size());  // the token's every slot: this one
  EXPECT_TRUE(slot_scale_steps(s.p, s.c, s.r, 0, 1).empty());     // no slot 1 at top-k 1
  // fp32 accumulation (24 bits) reaches no other bf16 value of the amax (unless it lies within about 2^-22 of a
  // rounding boundary, which this seed's does not): no step.
  const Steps f = hand_steps(24);
  EXPECT_TRUE(slot_scale_steps(f.p, f.c, f.r, 0, 0).empty());
}

}  // namespace
}  // namespace moe
