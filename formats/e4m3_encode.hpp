// Branch-light fp32 -> e4m3 (fn or fnuz) encoder for the hot quantization paths. Same rounding and saturation policy
// as the generic codec (minifloat.hpp): round to nearest even, saturate to +-max finite, NaN -> NaN, fnuz has no -0.
// Pinned to minifloat_encode by an exhaustive sweep in formats/tests/e4m3_encode_test.cpp.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>

#include "formats/format_tags.hpp"

namespace moe {

inline std::uint8_t e4m3_encode(Fp8Flavor f, float x) {
  // Every path is computed and one selected, without branches, so loops over this function vectorize.
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t a = u & 0x7FFFFFFFu;
  const bool fnuz = f == Fp8Flavor::fnuz;
  const std::uint32_t bias = fnuz ? 8 : 7;
  // Normal (|x| >= 2^(1 - bias)): round the 20 dropped mantissa bits to nearest even, rebias, saturate (Inf too).
  const std::uint32_t r = std::min(a, 0x7F800000u) + 0x7FFFFu + ((a >> 20) & 1u);
  const std::uint32_t normal = std::min((r >> 20) - ((127u - bias) << 3), fnuz ? 0x7Fu : 0x7Eu);
  // Subnormal: quantum 2^(-bias - 2); y < 8 so adding 2^23 rounds it to an integer, half to even.
  const float y = std::min(std::bit_cast<float>(std::min(a, 0x3F800000u)), 1.0f) * (fnuz ? 0x1p10f : 0x1p9f);
  const std::uint32_t sub = std::uint32_t((y + 0x1p23f) - 0x1p23f);
  const std::uint32_t code = a >= ((128u - bias) << 23) ? normal : sub;
  const std::uint32_t sign = (fnuz && code == 0) ? 0u : (u >> 24) & 0x80u;
  const std::uint32_t nan_code = fnuz ? 0x80u : (((u >> 24) & 0x80u) | 0x7Fu);
  return std::uint8_t(a > 0x7F800000u ? nan_code : (sign | code));
}

}  // namespace moe
