#include "formats/e8m0.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace moe {

float e8m0_decode(std::uint8_t code, E8m0Edges edges) {
  if (code == 0xFF) return edges == E8m0Edges::ocp ? std::numeric_limits<float>::quiet_NaN()
                                                    : std::numeric_limits<float>::infinity();
  if (code == 0x00 && edges == E8m0Edges::triton) return 0.0f;
  return std::ldexp(1.0f, int(code) - 127);  // 2^-127 is an fp32 subnormal: exact
}

std::uint8_t e8m0_from_exponent(int e) { return std::uint8_t(std::clamp(e, -127, 127) + 127); }

std::uint8_t e8m0_encode(float x) {
  if (std::isnan(x) || std::signbit(x)) return x == 0.0f ? 0x00 : 0xFF;  // -0 is zero, not negative
  if (x == 0.0f) return 0x00;
  if (std::isinf(x)) return 0xFE;
  int e2;
  const double f = std::frexp(double(x), &e2);  // x = f * 2^e2, f in [0.5, 1)
  int e = e2 - 1;
  if (std::nearbyint(f * 2.0) == 2.0) ++e;  // 2f in [1, 2): rounds to 1 or 2, the tie 1.5 to even (2)
  return e8m0_from_exponent(e);
}

}  // namespace moe
