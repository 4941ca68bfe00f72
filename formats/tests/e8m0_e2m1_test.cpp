#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "formats/e2m1.hpp"
#include "formats/e8m0.hpp"
#include "formats/minifloat.hpp"

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

namespace moe {

TEST(E2m1FastEncode, AgreesWithGenericCodecOnASweepOfAllFloats) {
  std::uint64_t bad = 0;
  for (std::uint64_t u = 0; u < (1ull << 32); u += 4099) {  // every exponent, many mantissas, both signs, NaNs
    const float x = std::bit_cast<float>(std::uint32_t(u));
    const auto want = minifloat_encode(kE2M1, x), got = std::uint32_t(e2m1_encode(x));
    if (want != got && bad++ < 5) ADD_FAILURE() << "x=" << x << " want " << want << " got " << got;
  }
  EXPECT_EQ(bad, 0u);
}

TEST(E2m1FastEncode, AgreesAtEveryMidpointAndItsNeighbours) {
  for (int c = 0; c < 7; ++c) {
    const float lo = minifloat_decode(kE2M1, c), hi = minifloat_decode(kE2M1, c + 1), mid = 0.5f * (lo + hi);
    for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), lo, hi})
      for (float sx : {x, -x}) EXPECT_EQ(std::uint32_t(e2m1_encode(sx)), minifloat_encode(kE2M1, sx)) << sx;
  }
  for (float sx : {6.0f, 7.0f, 8.0f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN, -NAN, 0.0f, -0.0f, 1e-45f, -1e-45f})
    EXPECT_EQ(std::uint32_t(e2m1_encode(sx)), minifloat_encode(kE2M1, sx)) << sx;
}

}  // namespace moe
