// bfloat16 <-> fp32 (docs/numerics.md "Element formats"): NaN -> 0x7FC0; otherwise u += 0x7FFF + ((u >> 16) & 1),
// keep the top half (round to nearest even; overflow reaches Inf).
#pragma once
#include <bit>
#include <cstdint>

namespace moe {

inline std::uint16_t bf16_from_f32(float x) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
  u += 0x7FFFu + ((u >> 16) & 1u);
  return std::uint16_t(u >> 16);
}

inline float bf16_to_f32(std::uint16_t b) { return std::bit_cast<float>(std::uint32_t(b) << 16); }

inline float round_to_bf16(float x) { return bf16_to_f32(bf16_from_f32(x)); }

}  // namespace moe
