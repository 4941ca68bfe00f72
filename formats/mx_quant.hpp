// OCP Microscaling v1.0: 32 consecutive elements along a row (the reduction dimension K) share one E8M0 scale.
// Element formats: MXFP8 (e4m3 fn, e5m2) and MXFP4 (e2m1, two per byte, even element in the low nibble).
// Scale selection is a case parameter because all three modes ship (docs/numerics.md "MX quantizer"):
//   floor : X = 2^(floor(log2 amax) - emax_elem)                  (OCP spec)
//   rceil : X = 2^ceil(log2(amax / max_elem))                      (triton_kernels, AITER default)
//   even  : amax_bits += 1 << (22 - mbits); amax_bits &= 0xFF800000; then floor   (AITER dynamic_mxfp4_quant)
// Exponents clamp to [-127, 127]; an all-zero block gets 2^-127 (code 0x00); a block holding NaN gets 0xFF.
// Elements are rne(V / X) with saturation.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "formats/dtype.hpp"
#include "formats/e8m0.hpp"
#include "formats/minifloat.hpp"

namespace moe {

inline constexpr int kMxBlock = 32;


const MinifloatSpec& mx_element_spec(MxElement e);
std::optional<MxElement> mx_element_of(DType element);  // e4m3fn, e5m2, e2m1x2; nullopt for any other dtype
int mx_element_emax(MxElement e);  // e4m3 8, e5m2 15, e2m1 2

// The block's shared exponent (unbiased) for its amax.
int mx_shared_exponent(float amax, MxElement e, MxScaleMode mode);

// x [rows, cols] (cols % 32 == 0) -> elements (fp8: [rows, cols] bytes; e2m1: [rows, cols/2] packed bytes) and
// scales [rows, cols/32] E8M0 codes.
void quantize_mx(const float* x, std::int64_t rows, std::int64_t cols, MxElement e, MxScaleMode mode,
                 std::uint8_t* elements, std::uint8_t* scales);
void dequantize_mx(const std::uint8_t* elements, const std::uint8_t* scales, std::int64_t rows, std::int64_t cols,
                   MxElement e, E8m0Edges edges, float* out);

}  // namespace moe
