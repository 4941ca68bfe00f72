// OCP MX v1.0 E8M0 shared scale: value 2^(code - 127) for codes 0..254, 0xFF = NaN; no zero, no sign, no Inf.
// Decoders in the field disagree at the edges (docs/numerics.md "Element formats"), so the edge rule is a named policy:
//   ocp:    0x00 -> 2^-127 (AITER, the spec), 0xFF -> NaN
//   triton: 0x00 -> 0,                        0xFF -> +Inf  (triton_kernels)
#pragma once
#include <cstdint>

#include "formats/format_tags.hpp"

namespace moe {


float e8m0_decode(std::uint8_t code, E8m0Edges edges = E8m0Edges::ocp);
// 2^unbiased_exponent, clamped to the representable range [-127, 127].
std::uint8_t e8m0_from_exponent(int unbiased_exponent);
// fp32 -> E8M0 with round-to-nearest-even on a format with no mantissa bit (a tie 1.5 * 2^e goes up to 2^(e+1)),
// saturating to [2^-127, 2^127] (+Inf -> 0xFE; zero, -0 and underflow -> 0x00). NaN and negative values have no
// scale and give 0xFF (NaN).
std::uint8_t e8m0_encode(float x);

}  // namespace moe
