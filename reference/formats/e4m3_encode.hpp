// Branch-light fp32 -> e4m3 (fn or fnuz) encoder for the hot quantization paths. Same rounding and saturation policy
// as the generic codec (minifloat.hpp): round to nearest even, saturate to +-max finite, NaN -> NaN, fnuz has no -0.
// Pinned to minifloat_encode by an exhaustive sweep in reference/tests/e4m3_encode_test.cpp.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>

#include "fixtures/format_tags.hpp"

namespace moe {

inline std::uint8_t e4m3_encode(Fp8Flavor f, float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t a = u & 0x7FFFFFFFu;
  const bool fnuz = f == Fp8Flavor::fnuz;
  if (a > 0x7F800000u) return fnuz ? 0x80 : std::uint8_t(((u >> 24) & 0x80u) | 0x7Fu);
  const std::uint32_t bias = fnuz ? 8 : 7;
  std::uint32_t code;
  if (a >= ((128u - bias) << 23)) {  // |x| >= 2^(1 - bias): normal in e4m3
    const std::uint32_t r = a + 0x7FFFFu + ((a >> 20) & 1u);  // round the 20 dropped mantissa bits to nearest even
    code = std::min((r >> 20) - ((127u - bias) << 3), fnuz ? 0x7Fu : 0x7Eu);
  } else {
    // Subnormal: quantum 2^(-bias - 2); y < 8 so adding 2^23 rounds it to an integer, half to even.
    const float y = std::bit_cast<float>(a) * (fnuz ? 0x1p10f : 0x1p9f);
    code = std::uint32_t((y + 0x1p23f) - 0x1p23f);
  }
  const std::uint32_t sign = (fnuz && code == 0) ? 0u : (u >> 24) & 0x80u;
  return std::uint8_t(sign | code);
}

}  // namespace moe
