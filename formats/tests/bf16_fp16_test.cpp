#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "formats/bf16.hpp"
#include "formats/fp16.hpp"

namespace moe {

TEST(Bf16, RoundNearestEvenFromBits) {
  // 1.0 = 0x3F800000. Half an ulp above (0x3F808000) is a tie -> even (0x3F80); a hair more goes up.
  EXPECT_EQ(bf16_from_f32(std::bit_cast<float>(0x3F808000u)), 0x3F80);
  EXPECT_EQ(bf16_from_f32(std::bit_cast<float>(0x3F808001u)), 0x3F81);
  EXPECT_EQ(bf16_from_f32(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie from an odd value goes up to even
  EXPECT_EQ(bf16_from_f32(1.0f), 0x3F80);
  EXPECT_EQ(bf16_from_f32(-2.0f), 0xC000);
}

TEST(Bf16, NanIsCanonicalAndOverflowReachesInf) {
  EXPECT_EQ(bf16_from_f32(NAN), 0x7FC0);
  EXPECT_EQ(bf16_from_f32(-NAN), 0x7FC0);
  EXPECT_EQ(bf16_from_f32(std::bit_cast<float>(0x7F7FFFFFu)), 0x7F80);  // FLT_MAX rounds up to +Inf
  EXPECT_EQ(bf16_from_f32(INFINITY), 0x7F80);
  EXPECT_EQ(bf16_to_f32(0x7F80), INFINITY);
  EXPECT_EQ(bf16_to_f32(0x3F80), 1.0f);
}

TEST(Fp16, IeeeValuesAndRounding) {
  EXPECT_EQ(fp16_from_f32(1.0f), 0x3C00);
  EXPECT_EQ(fp16_from_f32(65504.0f), 0x7BFF);
  EXPECT_EQ(fp16_from_f32(65519.0f), 0x7BFF);  // below the tie 65520
  EXPECT_EQ(fp16_from_f32(65520.0f), 0x7C00);  // the tie rounds to even = overflow to Inf (IEEE)
  EXPECT_EQ(fp16_from_f32(5.9604644775390625e-08f), 0x0001);  // 2^-24 smallest subnormal
  EXPECT_EQ(fp16_from_f32(2.98023223876953125e-08f), 0x0000);  // 2^-25: tie to even 0
  EXPECT_EQ(fp16_from_f32(-0.0f), 0x8000);
  EXPECT_EQ(fp16_from_f32(NAN), 0x7E00);
  EXPECT_EQ(fp16_to_f32(0xFC00), -INFINITY);
  EXPECT_EQ(fp16_to_f32(0x3555), 0.333251953125f);
}

}  // namespace moe
