// MXFP4 element packing: two E2M1 codes per byte, byte = x[2i] | (x[2i+1] << 4): the EVEN element sits in the LOW
// nibble (ONNX, gpt-oss, torchao, triton and AITER agree; docs/numerics.md).
#pragma once
#include <cmath>
#include <cstdint>

namespace moe {

inline std::uint8_t e2m1_pack(std::uint8_t even, std::uint8_t odd) { return std::uint8_t((even & 0xF) | ((odd & 0xF) << 4)); }
inline std::uint8_t e2m1_unpack(std::uint8_t byte, int which /*0 even, 1 odd*/) { return which ? byte >> 4 : byte & 0xF; }

// fp32 -> e2m1 code for the hot quantization paths, with the generic codec's policy (minifloat.hpp, kE2M1): round
// to nearest even among 0, 0.5, 1, 1.5, 2, 3, 4, 6, saturate to 6 (Inf too), the sign kept (-0 exists), NaN -> 0.
// The codes rise at the midpoints; a midpoint goes to the even code. Pinned to minifloat_encode by an exhaustive
// sweep in reference/tests/e8m0_e2m1_test.cpp.
inline std::uint8_t e2m1_encode(float x) {
  const float a = std::fabs(x);
  const int code = int(a > 0.25f) + int(a >= 0.75f) + int(a > 1.25f) + int(a >= 1.75f) + int(a > 2.5f) +
                   int(a >= 3.5f) + int(a > 5.0f);
  return std::isnan(x) ? std::uint8_t(0) : std::uint8_t((std::signbit(x) ? 0x8 : 0) | code);
}

}  // namespace moe
