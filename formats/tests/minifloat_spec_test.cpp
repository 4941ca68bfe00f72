// Every code of every 8-bit format (and the 16 of e2m1) against values written from the spec text in
// docs/numerics.md, by formulas written here independently of formats/, plus literal spec values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "formats/minifloat.hpp"

namespace moe {
namespace {

// --- independent decoders, one per format, transcribed from the specifications ---
double spec_e4m3fn(int c) {  // bias 7; NaN 0x7F/0xFF; no Inf; -0 = 0x80
  int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  if (e == 15 && m == 7) return NAN;
  double v = e == 0 ? std::pow(2.0, -6) * (m / 8.0) : std::pow(2.0, e - 7) * (1 + m / 8.0);
  return s ? -v : v;
}
double spec_e4m3fnuz(int c) {  // for every code but 0x80: value_fn(bits) / 2, and 0x7F/0xFF are finite
  if (c == 0x80) return NAN;
  int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  double v = e == 0 ? std::pow(2.0, -7) * (m / 8.0) : std::pow(2.0, e - 8) * (1 + m / 8.0);
  return s ? -v : v;
}
double spec_e5m2(int c) {  // bias 15; Inf S.11111.00; NaN S.11111.{01,10,11}
  int s = c >> 7, e = (c >> 2) & 31, m = c & 3;
  double v;
  if (e == 31) v = m == 0 ? INFINITY : NAN;
  else v = e == 0 ? std::pow(2.0, -14) * (m / 4.0) : std::pow(2.0, e - 15) * (1 + m / 4.0);
  return s ? -v : v;
}
double spec_e5m2fnuz(int c) {  // bias 16; only NaN 0x80; no Inf; no -0
  if (c == 0x80) return NAN;
  int s = c >> 7, e = (c >> 2) & 31, m = c & 3;
  double v = e == 0 ? std::pow(2.0, -15) * (m / 4.0) : std::pow(2.0, e - 16) * (1 + m / 4.0);
  return s ? -v : v;
}
// e2m1: codes 0..7 = {0, 0.5, 1, 1.5, 2, 3, 4, 6}, bit 3 = sign.
constexpr double kE2M1Values[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};

void expect_same(double want, float got, int code, const char* fmt) {
  if (std::isnan(want)) { EXPECT_TRUE(std::isnan(got)) << fmt << " code " << code; return; }
  EXPECT_EQ(double(got), want) << fmt << " code 0x" << std::hex << code;
  EXPECT_EQ(std::signbit(got), std::signbit(want)) << fmt << " sign of code 0x" << std::hex << code;
}

}  // namespace

TEST(Minifloat, E4M3Fn_All256CodesMatchSpec) {
  for (int c = 0; c < 256; ++c) expect_same(spec_e4m3fn(c), minifloat_decode(kE4M3Fn, c), c, "e4m3fn");
}
TEST(Minifloat, E4M3Fnuz_All256CodesMatchSpec) {
  for (int c = 0; c < 256; ++c) expect_same(spec_e4m3fnuz(c), minifloat_decode(kE4M3Fnuz, c), c, "e4m3fnuz");
}
TEST(Minifloat, E5M2_All256CodesMatchSpec) {
  for (int c = 0; c < 256; ++c) expect_same(spec_e5m2(c), minifloat_decode(kE5M2, c), c, "e5m2");
}
TEST(Minifloat, E5M2Fnuz_All256CodesMatchSpec) {
  for (int c = 0; c < 256; ++c) expect_same(spec_e5m2fnuz(c), minifloat_decode(kE5M2Fnuz, c), c, "e5m2fnuz");
}
TEST(Minifloat, E2M1_All16CodesMatchSpecTable) {
  for (int c = 0; c < 16; ++c) {
    const double want = (c & 8) ? -kE2M1Values[c & 7] : kE2M1Values[c & 7];
    expect_same(want, minifloat_decode(kE2M1, c), c, "e2m1");
  }
}

TEST(Minifloat, SpecEdgesLiteral) {
  // The specifications: largest finite, smallest subnormal, smallest normal.
  EXPECT_EQ(minifloat_decode(kE4M3Fn, 0x7E), 448.0f);
  EXPECT_EQ(minifloat_decode(kE4M3Fn, 0x01), 0.001953125f);  // 2^-9
  EXPECT_EQ(minifloat_decode(kE4M3Fn, 0x08), 0.015625f);     // 2^-6
  EXPECT_EQ(minifloat_decode(kE4M3Fnuz, 0x7F), 240.0f);
  EXPECT_EQ(minifloat_decode(kE4M3Fnuz, 0x01), 0.0009765625f);  // 2^-10
  EXPECT_EQ(minifloat_decode(kE4M3Fnuz, 0x08), 0.0078125f);     // 2^-7
  EXPECT_EQ(minifloat_decode(kE5M2, 0x7B), 57344.0f);
  EXPECT_EQ(minifloat_decode(kE5M2, 0x01), 1.52587890625e-05f);  // 2^-16
  EXPECT_TRUE(std::isinf(minifloat_decode(kE5M2, 0x7C)));
  EXPECT_TRUE(std::isnan(minifloat_decode(kE5M2, 0x7D)));
  EXPECT_EQ(minifloat_decode(kE5M2Fnuz, 0x7F), 57344.0f);
  EXPECT_EQ(minifloat_decode(kE5M2Fnuz, 0x01), 7.62939453125e-06f);  // 2^-17
  EXPECT_EQ(kE4M3Fn.max_finite(), 448.0);
  EXPECT_EQ(kE4M3Fnuz.max_finite(), 240.0);
  EXPECT_EQ(kE5M2.max_finite(), 57344.0);
  EXPECT_EQ(kE5M2Fnuz.max_finite(), 57344.0);
  EXPECT_EQ(kE2M1.max_finite(), 6.0);
  EXPECT_EQ(kFp16.max_finite(), 65504.0);
}

TEST(Minifloat, E4M3Fn_OverflowSaturatesAndTieAt464GoesToEven448) {
  EXPECT_EQ(minifloat_encode(kE4M3Fn, 448.0f), 0x7Eu);
  EXPECT_EQ(minifloat_encode(kE4M3Fn, 464.0f), 0x7Eu);  // the tie between 448 and (non-existent) 480
  EXPECT_EQ(minifloat_encode(kE4M3Fn, 465.0f), 0x7Eu);  // saturation policy (pytorch#178817)
  EXPECT_EQ(minifloat_encode(kE4M3Fn, 1e30f), 0x7Eu);
  EXPECT_EQ(minifloat_encode(kE4M3Fn, -1e30f), 0xFEu);
  EXPECT_EQ(minifloat_encode(kE4M3Fn, INFINITY), 0x7Eu);
  EXPECT_EQ(minifloat_encode(kE4M3Fn, NAN), 0x7Fu);
  EXPECT_EQ(minifloat_encode(kE4M3Fn, -NAN), 0xFFu);
  EXPECT_EQ(minifloat_encode(kE4M3Fn, -0.0f), 0x80u);
}

TEST(Minifloat, E4M3Fn_SubnormalTiesRoundToEven) {
  const float q = 0.001953125f;  // 2^-9, the subnormal quantum
  EXPECT_EQ(minifloat_encode(kE4M3Fn, 0.5f * q), 0x00u);   // tie between 0 and q -> 0 (even)
  EXPECT_EQ(minifloat_encode(kE4M3Fn, 1.5f * q), 0x02u);   // tie between q and 2q -> 2q
  EXPECT_EQ(minifloat_encode(kE4M3Fn, 2.5f * q), 0x02u);   // tie between 2q and 3q -> 2q
  EXPECT_EQ(minifloat_encode(kE4M3Fn, 0.51f * q), 0x01u);
  EXPECT_EQ(minifloat_encode(kE4M3Fn, -0.25f * q), 0x80u);  // rounds to -0
}

TEST(Minifloat, Fnuz_NoNegativeZero_NanIs0x80_Saturates) {
  EXPECT_EQ(minifloat_encode(kE4M3Fnuz, -0.0f), 0x00u);
  EXPECT_EQ(minifloat_encode(kE4M3Fnuz, -1e-6f), 0x00u);  // underflow of a negative value is +0, never NaN
  EXPECT_EQ(minifloat_encode(kE4M3Fnuz, NAN), 0x80u);
  EXPECT_EQ(minifloat_encode(kE4M3Fnuz, 250.0f), 0x7Fu);
  EXPECT_EQ(minifloat_encode(kE4M3Fnuz, -INFINITY), 0xFFu);
  EXPECT_EQ(minifloat_encode(kE5M2Fnuz, -0.0f), 0x00u);
  EXPECT_EQ(minifloat_encode(kE5M2Fnuz, NAN), 0x80u);
  EXPECT_EQ(minifloat_encode(kE5M2Fnuz, 1e9f), 0x7Fu);
}

TEST(Minifloat, E5M2_SaturatesKeepsNan) {
  EXPECT_EQ(minifloat_encode(kE5M2, 1e9f), 0x7Bu);
  EXPECT_EQ(minifloat_encode(kE5M2, INFINITY), 0x7Bu);
  EXPECT_EQ(minifloat_encode(kE5M2, NAN), 0x7Eu);
  EXPECT_EQ(minifloat_encode(kE5M2, -0.0f), 0x80u);
}

TEST(Minifloat, E2M1_TiesFromSpec) {
  // Round to nearest even: 0.25->0, 0.75->1, 1.25->1, 1.75->2, 2.5->2, 3.5->4, 5->4, >5->6.
  const std::pair<float, float> ties[] = {{0.25f, 0}, {0.75f, 1}, {1.25f, 1}, {1.75f, 2}, {2.5f, 2},
                                          {3.5f, 4},  {5.0f, 4},  {5.01f, 6}, {7.0f, 6},  {1e9f, 6}};
  for (auto [x, want] : ties) {
    EXPECT_EQ(minifloat_decode(kE2M1, minifloat_encode(kE2M1, x)), want) << x;
    EXPECT_EQ(minifloat_decode(kE2M1, minifloat_encode(kE2M1, -x)), -want) << -x;
  }
  EXPECT_EQ(minifloat_encode(kE2M1, -0.1f), 0x8u);  // e2m1 keeps -0
}

// An independent brute-force encoder: the nearest finite code, ties to the code with an even mantissa LSB,
// saturating. Compared with the arithmetic encoder on every midpoint, its neighbours, and random values.
std::uint32_t brute_encode(const MinifloatSpec& s, float x) {
  const int n = 1 << s.total_bits();
  std::uint32_t best = 0;
  double bestd = INFINITY;
  for (int c = 0; c < n; ++c) {
    const float v = minifloat_decode(s, c);
    if (!std::isfinite(v)) continue;
    // pick the zero of the input's sign where the format has both
    if (v == 0.0f && s.has_negative_zero() && std::signbit(v) != std::signbit(x)) continue;
    const double d = std::fabs(double(v) - double(x));
    if (d < bestd || (d == bestd && (c & 1) == 0 && (best & 1) == 1)) { best = c; bestd = d; }
  }
  return best;
}

TEST(Minifloat, EncodeMatchesBruteForceNearestEvenAtEveryMidpoint) {
  for (const MinifloatSpec* s : {&kE4M3Fn, &kE4M3Fnuz, &kE5M2, &kE5M2Fnuz, &kE2M1}) {
    std::vector<double> vals;
    for (int c = 0; c < (1 << s->total_bits()); ++c) {
      float v = minifloat_decode(*s, c);
      if (std::isfinite(v) && v >= 0) vals.push_back(v);
    }
    std::sort(vals.begin(), vals.end());
    vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
    for (std::size_t i = 0; i + 1 < vals.size(); ++i) {
      const double mid = 0.5 * (vals[i] + vals[i + 1]);
      for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9), vals[i]}) {
        for (double sx : {x, -x}) {
          const float f = float(sx);
          if (double(f) != sx) continue;  // only fp32-representable probes
          const std::uint32_t want = brute_encode(*s, f);
          EXPECT_EQ(minifloat_encode(*s, f), want) << s->name << " x=" << sx;
        }
      }
    }
  }
}

TEST(Minifloat, RoundTripEveryFiniteCode) {
  for (const MinifloatSpec* s : {&kE4M3Fn, &kE4M3Fnuz, &kE5M2, &kE5M2Fnuz, &kE2M1}) {
    for (int c = 0; c < (1 << s->total_bits()); ++c) {
      const float v = minifloat_decode(*s, c);
      if (std::isnan(v)) continue;
      if (std::isinf(v)) continue;  // e5m2 Inf saturates by policy (tested above)
      EXPECT_EQ(minifloat_encode(*s, v), std::uint32_t(c)) << s->name << " code " << c;
    }
  }
}

TEST(Minifloat, DecodeTablesMatchDecoder) {
  for (const MinifloatSpec* s : {&kE4M3Fn, &kE4M3Fnuz, &kE5M2, &kE5M2Fnuz}) {
    const DecodeTable& t = decode_table(*s);
    for (int c = 0; c < 256; ++c) expect_same(minifloat_decode(*s, c), t.value[c], c, "table");
  }
}

}  // namespace moe
