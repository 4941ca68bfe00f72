// IEEE binary16 through the generic codec (overflow to Inf, subnormals, round to nearest even).
#pragma once
#include <cstdint>

#include "formats/minifloat.hpp"

namespace moe {

inline std::uint16_t fp16_from_f32(float x) { return std::uint16_t(minifloat_encode(kFp16, x)); }
inline float fp16_to_f32(std::uint16_t h) { return minifloat_decode(kFp16, h); }
inline float round_to_fp16(float x) { return fp16_to_f32(fp16_from_f32(x)); }

}  // namespace moe
