// FP8 (e4m3) quantization at every granularity the field uses, through ONE blocked routine:
//   per-tensor           block = rows x cols          scale [1, 1]
//   per-token / channel  block = 1 x cols             scale [rows, 1]
//   128x128 weight block block = 128 x 128 (DeepSeek) scale [ceil(rows/128), ceil(cols/128)]
//   1x128 activation     block = 1 x 128              scale [rows, ceil(cols/128)]
// Scale s = max(amax, amax_floor) / qmax in fp32 (or times fp32(1 / qmax): Fp8Recipe::qmax_reciprocal; optionally
// rounded up to a power of two after that: DeepSeek-V3.1 "ue8m0"),
// codes q = rne(clamp(x / s, +-qmax)) (or x * (1 / s): Fp8Recipe::reciprocal) with the format's saturation (docs/numerics.md "FP8 quantizer").
// qmax is a parameter: vLLM quantizes fnuz activations with 224, AITER with 240.
#pragma once
#include <cstdint>

#include "formats/fp8.hpp"

namespace moe {

enum class ScaleRounding : std::uint8_t { exact, pow2_ceil };

struct Fp8Recipe {
  Fp8Flavor flavor = Fp8Flavor::fn;
  float qmax = 448.0f;
  float amax_floor = 1e-12f;
  ScaleRounding rounding = ScaleRounding::exact;
  bool reciprocal = false;  // codes from x * (1 / s), the reciprocal rounded to fp32, instead of x / s
  bool qmax_reciprocal = false;  // s from max(amax, floor) * (1 / qmax), the reciprocal rounded to fp32 (AITER's)
};

struct BlockShape {
  std::int64_t rows;
  std::int64_t cols;
};

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// x [rows, cols] row-major -> codes [rows, cols], scales [ceil(rows/b.rows), ceil(cols/b.cols)].
void quantize_fp8_blocked(const float* x, std::int64_t rows, std::int64_t cols, BlockShape block,
                          const Fp8Recipe& recipe, std::uint8_t* codes, float* scales);

// Inverse: out = decode(code) * scale of its block (fp32, exact: an fp8 value times an fp32 scale rounds once).
void dequantize_fp8_blocked(const std::uint8_t* codes, const float* scales, std::int64_t rows, std::int64_t cols,
                            BlockShape block, Fp8Flavor flavor, float* out);

float fp8_scale_for(float amax, const Fp8Recipe& recipe);
float pow2_ceil(float s);  // smallest power of two >= s (s > 0, finite)

}  // namespace moe
