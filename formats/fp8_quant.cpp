#include "formats/fp8_quant.hpp"

#include <algorithm>
#include <cmath>

#include "formats/e4m3_encode.hpp"
#include "formats/omp_errors.hpp"

namespace moe {

float pow2_ceil(float s) {
  int e;
  const float f = std::frexp(s, &e);  // s = f * 2^e, f in [0.5, 1)
  return f == 0.5f ? s : std::ldexp(1.0f, e);
}

float fp8_scale_for(float amax, const Fp8Recipe& r) {
  const float a = std::max(amax, r.amax_floor);
  float s = r.qmax_reciprocal ? a * (1.0f / r.qmax) : a / r.qmax;
  if (r.rounding == ScaleRounding::pow2_ceil) s = pow2_ceil(s);
  return s;
}

namespace {
// Row segments with restrict-qualified pointers and scalars in registers, so both loops vectorize.
float segment_amax(const float* __restrict x, std::int64_t n) {
  float amax = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = std::fabs(x[i]);
    amax = v > amax ? v : amax;  // NaN never wins: a NaN element still encodes as NaN below
  }
  return amax;
}
template <Fp8Flavor F, bool Reciprocal>
void segment_encode(const float* __restrict x, std::int64_t n, float s, float qmax, std::uint8_t* __restrict out) {
  const float inv = 1.0f / s;
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = Reciprocal ? x[i] * inv : x[i] / s;
    // clamp that lets NaN through (std::clamp's comparisons are false for NaN as well)
    out[i] = e4m3_encode(F, v < -qmax ? -qmax : (v > qmax ? qmax : v));
  }
}
}  // namespace

void quantize_fp8_blocked(const float* x, std::int64_t rows, std::int64_t cols, BlockShape b, const Fp8Recipe& r,
                          std::uint8_t* codes, float* scales) {
  const std::int64_t br = ceil_div(rows, b.rows), bc = ceil_div(cols, b.cols);
  const float qmax = r.qmax;
  OmpErrors errors;
#pragma omp parallel for collapse(2) schedule(static) if (rows * cols > (1 << 16))
  for (std::int64_t i = 0; i < br; ++i) {
    for (std::int64_t j = 0; j < bc; ++j) errors.run([&] {
      const std::int64_t r0 = i * b.rows, r1 = std::min(rows, r0 + b.rows);
      const std::int64_t c0 = j * b.cols, c1 = std::min(cols, c0 + b.cols);
      float amax = 0.0f;
      for (std::int64_t rr = r0; rr < r1; ++rr) amax = std::max(amax, segment_amax(x + rr * cols + c0, c1 - c0));
      const float s = fp8_scale_for(amax, r);
      scales[i * bc + j] = s;
      for (std::int64_t rr = r0; rr < r1; ++rr) {
        const float* in = x + rr * cols + c0;
        std::uint8_t* out = codes + rr * cols + c0;
        const bool fn = r.flavor == Fp8Flavor::fn;
        if (r.reciprocal) (fn ? segment_encode<Fp8Flavor::fn, true> : segment_encode<Fp8Flavor::fnuz, true>)(in, c1 - c0, s, qmax, out);
        else (fn ? segment_encode<Fp8Flavor::fn, false> : segment_encode<Fp8Flavor::fnuz, false>)(in, c1 - c0, s, qmax, out);
      }
    });
  }
  errors.rethrow();
}

void dequantize_fp8_blocked(const std::uint8_t* codes, const float* scales, std::int64_t rows, std::int64_t cols,
                            BlockShape b, Fp8Flavor flavor, float* out) {
  const DecodeTable& t = decode_table(e4m3_spec(flavor));
  const std::int64_t bc = ceil_div(cols, b.cols);
  for (std::int64_t rr = 0; rr < rows; ++rr) {
    const float* srow = scales + (rr / b.rows) * bc;
    for (std::int64_t cc = 0; cc < cols; ++cc) out[rr * cols + cc] = t.value[codes[rr * cols + cc]] * srow[cc / b.cols];
  }
}

}  // namespace moe
