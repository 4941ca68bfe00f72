#include "formats/e4m3_encode.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "formats/fp8.hpp"
#include "formats/minifloat.hpp"

namespace moe {

TEST(E4m3FastEncode, AgreesWithGenericCodecOnASweepOfAllFloats) {
  for (Fp8Flavor f : {Fp8Flavor::fn, Fp8Flavor::fnuz}) {
    const MinifloatSpec& spec = e4m3_spec(f);
    std::uint64_t bad = 0;
    for (std::uint64_t u = 0; u < (1ull << 32); u += 4099) {  // every exponent, many mantissas, both signs
      const float x = std::bit_cast<float>(std::uint32_t(u));
      const auto want = minifloat_encode(spec, x), got = std::uint32_t(e4m3_encode(f, x));
      if (want != got && bad++ < 5) ADD_FAILURE() << spec.name << " x=" << x << " want " << want << " got " << got;
    }
    EXPECT_EQ(bad, 0u);
  }
}

TEST(E4m3FastEncode, AgreesAtEveryMidpointAndItsNeighbours) {
  for (Fp8Flavor f : {Fp8Flavor::fn, Fp8Flavor::fnuz}) {
    const MinifloatSpec& spec = e4m3_spec(f);
    for (int c = 0; c < 0x7F; ++c) {
      const float lo = minifloat_decode(spec, c), hi = minifloat_decode(spec, c + 1);
      if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
      const float mid = 0.5f * (lo + hi);
      for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), lo, hi})
        for (float sx : {x, -x}) EXPECT_EQ(std::uint32_t(e4m3_encode(f, sx)), minifloat_encode(spec, sx)) << spec.name << " " << sx;
    }
    for (float sx : {1e30f, -1e30f, INFINITY, -INFINITY, NAN, -NAN, 0.0f, -0.0f, 464.0f, 465.0f, 240.0f, 248.0f})
      EXPECT_EQ(std::uint32_t(e4m3_encode(f, sx)), minifloat_encode(spec, sx)) << spec.name << " " << sx;
  }
}

}  // namespace moe
