// Small IEEE-like binary floating formats, described by a spec and decoded / encoded by one generic codec:
// fp16, fp8 e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, and the MX element e2m1. The facts: docs/numerics.md.
//
// Encoding from fp32 is round-to-nearest-even at the format's precision, subnormals included.
// Overflow policy: the fp8 and fp4 formats SATURATE: any |x| above max finite, infinities
// included, becomes +-max, because production quantizers clamp to +-qmax first. fp16 is IEEE: overflow rounds to Inf.
// NaN stays NaN where the format has one (e4m3fn: s.1111.111; e5m2 and fp16: the quiet NaN s.11111.10(0..);
// fnuz formats: 0x80). e2m1 has no NaN: encoding NaN gives +0, and the MX quantizer carries the NaN in the block's
// E8M0 scale (0xFF) instead. Formats without -0 (fnuz) encode -0 and negative values that round to zero as 0x00.
#pragma once
#include <cstdint>
#include <string_view>

#include "formats/dtype.hpp"

namespace moe {

enum class NanEncoding : std::uint8_t {
  none,        // no NaN code (e2m1)
  ieee,        // exponent all ones: mantissa 0 = Inf, otherwise NaN (fp16, e5m2)
  all_ones,    // only exponent and mantissa all ones (e4m3fn: 0x7F, 0xFF); no Inf
  negative_zero_code,  // only the sign-bit-alone code (fnuz: 0x80); no Inf, no -0
};

struct MinifloatSpec {
  std::string_view name;
  int exponent_bits;
  int mantissa_bits;
  int bias;
  NanEncoding nan;
  bool saturate;  // overflow -> +-max finite (fp8/fp4 policy) instead of Inf (IEEE fp16)

  int total_bits() const { return 1 + exponent_bits + mantissa_bits; }
  bool has_inf() const { return nan == NanEncoding::ieee; }
  bool has_negative_zero() const { return nan != NanEncoding::negative_zero_code; }
  double max_finite() const;
  double min_normal() const;     // 2^(1 - bias)
  double min_subnormal() const;  // 2^(1 - bias - mantissa_bits)
};

inline constexpr MinifloatSpec kFp16{"fp16", 5, 10, 15, NanEncoding::ieee, false};
inline constexpr MinifloatSpec kE4M3Fn{"e4m3fn", 4, 3, 7, NanEncoding::all_ones, true};
inline constexpr MinifloatSpec kE4M3Fnuz{"e4m3fnuz", 4, 3, 8, NanEncoding::negative_zero_code, true};
inline constexpr MinifloatSpec kE5M2{"e5m2", 5, 2, 15, NanEncoding::ieee, true};
inline constexpr MinifloatSpec kE5M2Fnuz{"e5m2fnuz", 5, 2, 16, NanEncoding::negative_zero_code, true};
inline constexpr MinifloatSpec kE2M1{"e2m1", 2, 1, 1, NanEncoding::none, true};

// The codec of a stored dtype's elements: f16, the fp8 formats, e2m1 (e2m1x2 holds two a byte); nullptr for the
// others (f32, bf16, the integers, e8m0).
const MinifloatSpec* minifloat_spec_of(DType t);

float minifloat_decode(const MinifloatSpec& spec, std::uint32_t code);
std::uint32_t minifloat_encode(const MinifloatSpec& spec, float x);

// Precomputed decode tables for the one-byte formats (hot paths dequantize through these).
struct DecodeTable { float value[256]; };
const DecodeTable& decode_table(const MinifloatSpec& spec);  // spec must be an 8-bit or 4-bit format above

}  // namespace moe
