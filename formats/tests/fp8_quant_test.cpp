#include "formats/fp8_quant.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace moe {

TEST(Fp8Quant, PerToken_HandComputedCodes) {
  // amax 4, qmax 448: s = 4/448, so x/s = {56, -112, 224, 448}: 56 = 1.75*2^5 -> e=12,m=6 -> 0x66, etc.
  const float x[4] = {0.5f, -1.0f, 2.0f, 4.0f};
  std::uint8_t q[4];
  float s;
  quantize_fp8_blocked(x, 1, 4, {1, 4}, {Fp8Flavor::fn, 448.0f}, q, &s);
  EXPECT_EQ(s, 4.0f / 448.0f);
  EXPECT_EQ(q[0], 0x66);
  EXPECT_EQ(q[1], 0xEE);
  EXPECT_EQ(q[2], 0x76);
  EXPECT_EQ(q[3], 0x7E);
}

// x / s and x * (1 / s) differ by one fp32 rounding, which can cross an e4m3 tie. amax 1344 = 3 * 448 gives s = 3
// exactly. x = 3.5625 - 2^-22 (one ulp below 3 * 1.1875): x / 3 = 1.18749988 lies below the tie 1.1875 between 1.125
// (0x39) and 1.25 (0x3A) and rounds to 1.125; fp32(1 / 3) = 0.333333343 is rounded up, x * 0.333333343 rounds to
// exactly 1.1875 in fp32, and the tie goes to the even mantissa, 1.25.
TEST(Fp8Quant, ReciprocalScaleCanMoveACodeAcrossATie) {
  const float x[2] = {3.5624997615814209f, 1344.0f};
  std::uint8_t div[2], rec[2];
  float s;
  Fp8Recipe r{Fp8Flavor::fn, 448.0f};
  quantize_fp8_blocked(x, 1, 2, {1, 2}, r, div, &s);
  EXPECT_EQ(s, 3.0f);
  EXPECT_EQ(div[0], 0x39);
  r.reciprocal = true;
  quantize_fp8_blocked(x, 1, 2, {1, 2}, r, rec, &s);
  EXPECT_EQ(rec[0], 0x3A);
  EXPECT_EQ(div[1], 0x7E);
  EXPECT_EQ(rec[1], 0x7E);  // 1344 * fp32(1/3) = 448.000012 -> 448
}

// The scale's form (the contract points token_scale_form / group_scale_form), by hand. amax 2.625 = 21 / 8, qmax 448
// = 7 * 64: amax / qmax = 3 / 512 = 0x1.8p-8 exactly. fp32(1 / 448) = 0x1.24924ap-9 (1 / 7 = 0x1.249249|2...p-3
// rounds up), and 2.625 * 0x1.24924ap-9 = 0x1.800001...p-8 lies above the midpoint 0x1.800001p-8 (the reciprocal's
// error, 3 / 7 of an ulp of 1 / 448, is over half an ulp of 3 / 512): AITER's s = 0x1.800002p-8, one ulp above.
// x = 0.6328125 (a bf16 value): x / (3 / 512) = 108 exactly, the midpoint of e4m3's 104 (0x6D) and 112 (0x6E),
// ties to the even mantissa: 112. x / 0x1.800002p-8 = 108 / (1 + 2^-22 / 3) = 108 - 1.125 ulp of 108, rounded to
// 108 - 2^-17 = 0x1.affffep+6: below the tie, 104. The amax element codes 448 (0x7E) either way (447.99997 is
// nearer 448 than 416).
TEST(Fp8Quant, QmaxReciprocalScaleMovesACodeAcrossATie) {
  const float x[2] = {0.6328125f, 2.625f};
  // The two scales, formed here with plain fp32 arithmetic (volatile: no constant folding at another precision).
  volatile float qmax = 448.0f, amax = 2.625f;
  volatile float inv_qmax = 1.0f / qmax;
  EXPECT_EQ(inv_qmax, 0x1.24924ap-9f);
  EXPECT_EQ(amax / qmax, 0x1.8p-8f);
  EXPECT_EQ(amax * inv_qmax, 0x1.800002p-8f);
  for (BlockShape b : {BlockShape{1, 2}, BlockShape{1, 128}}) {  // per token, and one 1 x 128 group
    std::uint8_t div[2], rcp[2];
    float s = 0.0f;
    Fp8Recipe r{Fp8Flavor::fn, 448.0f};
    quantize_fp8_blocked(x, 1, 2, b, r, div, &s);
    EXPECT_EQ(s, 0x1.8p-8f);
    EXPECT_EQ(div[0], 0x6E);  // 112
    EXPECT_EQ(div[1], 0x7E);  // 448
    r.qmax_reciprocal = true;
    quantize_fp8_blocked(x, 1, 2, b, r, rcp, &s);
    EXPECT_EQ(s, 0x1.800002p-8f);
    EXPECT_EQ(rcp[0], 0x6D);  // 104
    EXPECT_EQ(rcp[1], 0x7E);
    // AITER's whole quantizer (codes x * fp32(1 / s) as well): x * fp32(1 / 0x1.800002p-8) stays below the tie, 104.
    r.reciprocal = true;
    quantize_fp8_blocked(x, 1, 2, b, r, rcp, &s);
    EXPECT_EQ(rcp[0], 0x6D);
  }
}

TEST(Fp8Quant, FnuzWithQmax224_VllmPolicy) {
  const float x[2] = {4.0f, -1.0f};
  std::uint8_t q[2];
  float s;
  quantize_fp8_blocked(x, 1, 2, {1, 2}, {Fp8Flavor::fnuz, 224.0f}, q, &s);
  EXPECT_EQ(s, 4.0f / 224.0f);
  EXPECT_EQ(q[0], 0x7E);  // 224 = 1.75 * 2^7, fnuz bias 8 -> e=15, m=6
  EXPECT_EQ(q[1], 0xEE);  // -56 = -1.75 * 2^5 -> e=13, m=6, sign
}

TEST(Fp8Quant, Ue8m0ScaleIsNextPowerOfTwo) {
  const float x[2] = {4.0f, 1.0f};
  std::uint8_t q[2];
  float s;
  quantize_fp8_blocked(x, 1, 2, {1, 128}, {Fp8Flavor::fn, 448.0f, 1e-4f, ScaleRounding::pow2_ceil}, q, &s);
  EXPECT_EQ(s, 0.015625f);  // 4/448 = 0.0089 -> 2^-6
  EXPECT_EQ(q[0], 0x78);    // 4 / 2^-6 = 256 = 2^8 -> e=15, m=0
  EXPECT_EQ(pow2_ceil(0.25f), 0.25f);
  EXPECT_EQ(pow2_ceil(0.26f), 0.5f);
}

TEST(Fp8Quant, AmaxFloorAvoidsZeroScale) {
  const float x[3] = {0, 0, 0};
  std::uint8_t q[3];
  float s;
  quantize_fp8_blocked(x, 1, 3, {1, 3}, {Fp8Flavor::fn, 448.0f, 1e-4f}, q, &s);
  EXPECT_EQ(s, 1e-4f / 448.0f);
  EXPECT_EQ(q[0], 0);
}

TEST(Fp8Quant, Block128x128_ScaleShapeAndPerBlockAmax) {
  const std::int64_t rows = 200, cols = 130;  // ragged last blocks in both dimensions
  std::vector<float> w(rows * cols, 0.01f);
  w[5 * cols + 3] = 8.0f;        // block (0, 0)
  w[150 * cols + 129] = -2.0f;   // block (1, 1): the ragged corner
  w[10 * cols + 128] = 1.0f;     // block (0, 1)
  std::vector<std::uint8_t> q(rows * cols);
  std::vector<float> s(4);
  quantize_fp8_blocked(w.data(), rows, cols, {128, 128}, {Fp8Flavor::fn, 448.0f}, q.data(), s.data());
  EXPECT_EQ(s[0], 8.0f / 448.0f);
  EXPECT_EQ(s[1], 1.0f / 448.0f);
  EXPECT_EQ(s[2], 0.01f / 448.0f);
  EXPECT_EQ(s[3], 2.0f / 448.0f);
  EXPECT_EQ(q[5 * cols + 3], 0x7E);
  EXPECT_EQ(q[150 * cols + 129], 0xFE);
  std::vector<float> back(rows * cols);
  dequantize_fp8_blocked(q.data(), s.data(), rows, cols, {128, 128}, Fp8Flavor::fn, back.data());
  for (std::int64_t i = 0; i < rows * cols; ++i) EXPECT_NEAR(back[i], w[i], std::fabs(w[i]) * 0.0625f + 1e-9f) << i;
  EXPECT_EQ(back[5 * cols + 3], 8.0f);
}

TEST(Fp8Quant, PerTensorIsOneBlock) {
  std::vector<float> x = {1, 2, 3, -6};
  std::vector<std::uint8_t> q(4);
  float s;
  quantize_fp8_blocked(x.data(), 2, 2, {2, 2}, {Fp8Flavor::fn, 448.0f}, q.data(), &s);
  EXPECT_EQ(s, 6.0f / 448.0f);
  EXPECT_EQ(q[3], 0xFE);
}

}  // namespace moe
