#include <gtest/gtest.h>

#include <cmath>

#include "formats/e2m1.hpp"
#include "formats/e8m0.hpp"

namespace moe {

TEST(E8m0, All256CodesUnderBothEdgePolicies) {
  for (int c = 0; c < 256; ++c) {
    const float ocp = e8m0_decode(std::uint8_t(c), E8m0Edges::ocp);
    const float tri = e8m0_decode(std::uint8_t(c), E8m0Edges::triton);
    if (c == 255) {
      EXPECT_TRUE(std::isnan(ocp));
      EXPECT_EQ(tri, INFINITY);
    } else if (c == 0) {
      EXPECT_EQ(ocp, 5.877471754111438e-39f);  // 2^-127, an fp32 subnormal
      EXPECT_EQ(tri, 0.0f);
    } else {
      EXPECT_EQ(double(ocp), std::pow(2.0, c - 127)) << c;
      EXPECT_EQ(ocp, tri);
    }
  }
  EXPECT_EQ(e8m0_decode(127), 1.0f);
  EXPECT_EQ(e8m0_decode(254), 1.7014118346046923e38f);  // 2^127
}

TEST(E8m0, EncodePowersExactly_RoundsTiesUp_Saturates) {
  EXPECT_EQ(e8m0_encode(1.0f), 127);
  EXPECT_EQ(e8m0_encode(0.25f), 125);
  EXPECT_EQ(e8m0_encode(1.4f), 127);
  EXPECT_EQ(e8m0_encode(1.5f), 128);  // no mantissa bit: the tie goes to the even code, 2^1
  EXPECT_EQ(e8m0_encode(1.6f), 128);
  EXPECT_EQ(e8m0_encode(0.0f), 0);
  EXPECT_EQ(e8m0_encode(1e-45f), 0);
  EXPECT_EQ(e8m0_encode(INFINITY), 254);
  EXPECT_EQ(e8m0_encode(3e38f), 254);
  EXPECT_EQ(e8m0_encode(NAN), 255);
  EXPECT_EQ(e8m0_encode(-1.0f), 255);
  EXPECT_EQ(e8m0_from_exponent(-200), 0);
  EXPECT_EQ(e8m0_from_exponent(200), 254);
}

TEST(E2m1Packing, EvenElementInLowNibble) {
  EXPECT_EQ(e2m1_pack(0x1, 0x2), 0x21);
  EXPECT_EQ(e2m1_unpack(0x21, 0), 0x1);
  EXPECT_EQ(e2m1_unpack(0x21, 1), 0x2);
  EXPECT_EQ(e2m1_pack(0xF, 0x0), 0x0F);
}

}  // namespace moe
