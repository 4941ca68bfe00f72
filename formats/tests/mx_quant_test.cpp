#include "formats/mx_quant.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "formats/e2m1.hpp"
#include "formats/e8m0.hpp"
#include "formats/minifloat.hpp"

namespace moe {
namespace {
std::array<float, 32> block_with_amax(float amax) {
  std::array<float, 32> b{};
  for (int i = 0; i < 32; ++i) b[i] = (i % 2 ? -0.25f : 0.25f) * amax * float(i % 4) / 3.0f;
  b[7] = amax;
  return b;
}
std::uint8_t scale_code(float amax, MxElement e, MxScaleMode m) {
  auto b = block_with_amax(amax);
  std::uint8_t el[32], sc;
  quantize_mx(b.data(), 1, 32, e, m, el, &sc);
  return sc;
}
}  // namespace

// Shared exponents worked by hand from the three formulas in docs/numerics.md "MX quantizer".
TEST(MxScale, Fp4_FloorRceilEven_HandComputed) {
  // amax 6: floor(log2 6) - 2 = 0; ceil(log2(6/6)) = 0; even: 6 + half-ulp(1 bit) = 0x40C00000+0x200000 -> 0x40E00000 -> mask 4 -> 0.
  EXPECT_EQ(scale_code(6.0f, MxElement::e2m1, MxScaleMode::floor), 127);
  EXPECT_EQ(scale_code(6.0f, MxElement::e2m1, MxScaleMode::rceil), 127);
  EXPECT_EQ(scale_code(6.0f, MxElement::e2m1, MxScaleMode::even), 127);
  // amax 7: floor -> 0 (7 then saturates to 6); rceil: ceil(log2(7/6)) = 1; even: 0x40E00000 + 0x200000 = 8.0 -> 3 - 2 = 1.
  EXPECT_EQ(scale_code(7.0f, MxElement::e2m1, MxScaleMode::floor), 127);
  EXPECT_EQ(scale_code(7.0f, MxElement::e2m1, MxScaleMode::rceil), 128);
  EXPECT_EQ(scale_code(7.0f, MxElement::e2m1, MxScaleMode::even), 128);
  // amax 6.5: even rounds 0x40D00000 + 0x200000 = 0x40F00000 -> mask 4.0 -> 0; rceil -> 1.
  EXPECT_EQ(scale_code(6.5f, MxElement::e2m1, MxScaleMode::even), 127);
  EXPECT_EQ(scale_code(6.5f, MxElement::e2m1, MxScaleMode::rceil), 128);
  // amax 0.3: floor(log2 0.3) = -2 -> -4; rceil: ceil(log2(0.05)) = -4.
  EXPECT_EQ(scale_code(0.3f, MxElement::e2m1, MxScaleMode::floor), 123);
  EXPECT_EQ(scale_code(0.3f, MxElement::e2m1, MxScaleMode::rceil), 123);
}

TEST(MxScale, Fp8_FloorVsRceil) {
  // e4m3: emax 8, max 448. amax 500: floor(log2 500) = 8 -> 0; rceil: ceil(log2(500/448)) = 1.
  EXPECT_EQ(scale_code(500.0f, MxElement::e4m3, MxScaleMode::floor), 127);
  EXPECT_EQ(scale_code(500.0f, MxElement::e4m3, MxScaleMode::rceil), 128);
  // e5m2: emax 15. amax 1: floor -> -15.
  EXPECT_EQ(scale_code(1.0f, MxElement::e5m2, MxScaleMode::floor), 112);
}

TEST(MxQuant, ZeroBlockAndNanBlock) {
  std::array<float, 32> z{};
  std::uint8_t el[16], sc;
  quantize_mx(z.data(), 1, 32, MxElement::e2m1, MxScaleMode::floor, el, &sc);
  EXPECT_EQ(sc, 0x00);
  for (auto b : el) EXPECT_EQ(b, 0);
  z[3] = NAN;
  quantize_mx(z.data(), 1, 32, MxElement::e2m1, MxScaleMode::floor, el, &sc);
  EXPECT_EQ(sc, 0xFF);
}

TEST(MxQuant, Fp4ElementsPackedEvenLowAndSaturate) {
  std::array<float, 32> v{};
  v[0] = 1.0f;   // code 2
  v[1] = -3.0f;  // code 0xD
  v[2] = 7.0f;   // saturates to 6: code 7 (FLOOR keeps X = 1)
  v[3] = 0.25f;  // tie -> 0
  std::uint8_t el[16], sc;
  quantize_mx(v.data(), 1, 32, MxElement::e2m1, MxScaleMode::floor, el, &sc);
  EXPECT_EQ(sc, 127);
  EXPECT_EQ(el[0], 0xD2);
  EXPECT_EQ(el[1], 0x07);
  std::array<float, 32> back{};
  dequantize_mx(el, &sc, 1, 32, MxElement::e2m1, E8m0Edges::ocp, back.data());
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], -3.0f);
  EXPECT_EQ(back[2], 6.0f);
  EXPECT_EQ(back[3], 0.0f);
}

TEST(MxQuant, Mxfp8RoundTripWithinHalfUlp) {
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[i] = std::sin(float(i)) * (i < 32 ? 3.0f : 0.001f);
  std::vector<std::uint8_t> el(64), sc(2);
  quantize_mx(x.data(), 1, 64, MxElement::e4m3, MxScaleMode::rceil, el.data(), sc.data());
  std::vector<float> back(64);
  dequantize_mx(el.data(), sc.data(), 1, 64, MxElement::e4m3, E8m0Edges::ocp, back.data());
  for (int i = 0; i < 64; ++i) EXPECT_NEAR(back[i], x[i], std::fabs(x[i]) / 16 + std::ldexp(1.0f, int(sc[i / 32]) - 127 - 9)) << i;
}

}  // namespace moe

namespace moe {

// The quantizer against its definition written out plainly: per block of 32, the shared exponent X of the block's
// amax (mx_shared_exponent), then each element encoded by the generic codec from ldexp(v, -X). Blocks span the
// whole fp32 range, so scaled elements land in the subnormal range, saturate, and the scale reaches 2^-127 and
// 2^127; NaN and Inf blocks are included.
TEST(MxQuant, EqualsThePlainDefinitionOnEveryKindOfBlock) {
  constexpr std::int64_t rows = 64, cols = 256;
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  std::uint32_t state = 12345;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const int exp = int(r * 4) - 140 + int(next() % 24);  // a block's elements within 2^24 of each other
      x[r * cols + c] = std::ldexp(float(next() % 0x1000000) / 0x1p24f, exp) * (next() % 2 ? 1.0f : -1.0f);
    }
  x[5] = NAN;
  x[cols + 3] = INFINITY;
  x[2 * cols + 40] = -INFINITY;
  for (MxElement e : {MxElement::e2m1, MxElement::e4m3, MxElement::e5m2})
    for (MxScaleMode m : {MxScaleMode::floor, MxScaleMode::rceil, MxScaleMode::even}) {
      const std::int64_t el_bytes = e == MxElement::e2m1 ? cols / 2 : cols;
      std::vector<std::uint8_t> el(static_cast<std::size_t>(rows * el_bytes)), sc(static_cast<std::size_t>(rows * cols / 32));
      quantize_mx(x.data(), rows, cols, e, m, el.data(), sc.data());
      int bad = 0;
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t b = 0; b < cols / 32; ++b) {
          const float* v = x.data() + r * cols + b * 32;
          float amax = 0.0f;
          bool nan = false;
          for (int i = 0; i < 32; ++i) nan |= std::isnan(v[i]), amax = std::fmax(amax, std::fabs(v[i]));
          const int se = mx_shared_exponent(amax, e, m);
          EXPECT_EQ(sc[r * (cols / 32) + b], nan ? 0xFF : e8m0_from_exponent(se));
          for (int i = 0; i < 32; ++i) {
            const std::uint32_t want = minifloat_encode(mx_element_spec(e), std::ldexp(v[i], -se));
            const std::int64_t at = r * cols + b * 32 + i;
            const std::uint32_t got = e == MxElement::e2m1 ? e2m1_unpack(el[at / 2], int(at % 2)) : el[at];
            if (want != got && bad++ < 3) ADD_FAILURE() << "row " << r << " element " << i << ": " << v[i] << " want " << want << " got " << got;
          }
        }
      EXPECT_EQ(bad, 0) << "element " << int(e) << " mode " << int(m);
    }
}

}  // namespace moe
