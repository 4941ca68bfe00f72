#include "reference/moe/expert_dequant.hpp"

#include <algorithm>
#include <bit>
#include <type_traits>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <cmath>
#include <limits>
#include <vector>

#include "formats/bf16.hpp"
#include "formats/e8m0.hpp"
#include "formats/minifloat.hpp"
#include "formats/weight_format.hpp"

namespace moe {
namespace {

// Branch-free decoders the compiler vectorizes. Placing an e4m3 code's exponent and mantissa under fp32's field
// positions gives 2^(e-127) * (1 + m/8) for e > 0 and exactly (m/8) * 2^-126 (an fp32 subnormal) for e = 0; one
// multiplication by 2^(127 - bias) is then exact and yields the spec value for every finite code (the spec tests
// in reference/tests pin the table decoder; tests/expert_dequant_test.cpp pins these against it). NaN codes are
// patched after.
inline float e4m3_bits(std::uint8_t b) {
  return std::bit_cast<float>((std::uint32_t(b & 0x80u) << 24) | (std::uint32_t(b & 0x7Fu) << 20));
}
// e2m1: s e e m -> fp32 sign, exponent field e, top mantissa bit m; times 2^(127 - 1).
inline float e2m1_bits(std::uint8_t nib) {
  return std::bit_cast<float>((std::uint32_t(nib & 0x8u) << 28) | (std::uint32_t(nib & 0x7u) << 22));
}
constexpr float kE4M3FnUnbias = 0x1p120f;    // 2^(127 - 7)
constexpr float kE4M3FnuzUnbias = 0x1p119f;  // 2^(127 - 8)
constexpr float kE2M1Unbias = 0x1p126f;      // 2^(127 - 1)

const std::vector<float>& fp16_table() {
  static const std::vector<float> t = [] {
    std::vector<float> v(65536);
    for (std::uint32_t c = 0; c < 65536; ++c) v[c] = minifloat_decode(kFp16, c);
    return v;
  }();
  return t;
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__F16C__)
// 16 e4m3 codes -> fp32 through the half-precision converter: the code's bits moved under fp16's fields (sign to bit
// 15, exponent and mantissa to bits 13..7) give exactly value * 2^-8 (fn; 2^-7 for fnuz's bias 8) for every finite
// code, subnormals included, since fp16's exponent range covers e4m3's; times 2^8 (2^7) is exact. About 6
// instructions per 16 elements against 10 for the fp32 placement (the decode bench is bound by this decode).
inline __m512 e4m3x16_times(const std::uint8_t* codes, __m512 unbias_times) {
  const __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes)));
  const __m256i h = _mm256_and_si256(_mm256_srai_epi16(_mm256_slli_epi16(w, 8), 1), _mm256_set1_epi16(std::int16_t(0xBFFF)));
  return _mm512_mul_ps(_mm512_maskz_cvtph_ps(__mmask16(0xFFFF), h), unbias_times);
}
#endif

// decode(code) * scale for k codes whose scale changes every `block` columns (block = k: one scale per row).
template <class S>
void fp8_row(const std::uint8_t* codes, std::int64_t k, Fp8Flavor f, const float* scales, std::int64_t block, S* out) {
  const float unbias = f == Fp8Flavor::fn ? kE4M3FnUnbias : kE4M3FnuzUnbias;
  unsigned nan = 0;
  for (std::int64_t c0 = 0, b = 0; c0 < k; c0 += block, ++b) {
    const S s = S(scales[b]);
    const std::int64_t c1 = std::min(k, c0 + block);
    std::int64_t c = c0;
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__F16C__)
    if constexpr (std::is_same_v<S, float>) {
      const __m512 half_unbias = _mm512_set1_ps(f == Fp8Flavor::fn ? 256.0f : 128.0f), vs = _mm512_set1_ps(s);
      const __m128i nan_code = _mm_set1_epi8(f == Fp8Flavor::fn ? 0x7F : char(0x80));
      const __m128i nan_mask = _mm_set1_epi8(f == Fp8Flavor::fn ? 0x7F : char(0xFF));
      __mmask16 any_nan = 0;
      for (; c + 16 <= c1; c += 16) {
        // (v * 2^8) * s: the first product exact, one rounding in all, as in the scalar loop below.
        _mm512_storeu_ps(out + c, _mm512_mul_ps(e4m3x16_times(codes + c, half_unbias), vs));
        const __m128i b16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + c));
        any_nan |= _mm_cmpeq_epi8_mask(_mm_and_si128(b16, nan_mask), nan_code);
      }
      nan |= unsigned(any_nan != 0);
    }
#endif
    for (; c < c1; ++c) {
      out[c] = S(e4m3_bits(codes[c]) * unbias) * s;  // the first product is exact: one rounding in all
      nan |= f == Fp8Flavor::fn ? unsigned((codes[c] & 0x7F) == 0x7F) : unsigned(codes[c] == 0x80);
    }
  }
  if (nan)
    for (std::int64_t c = 0; c < k; ++c)
      if (f == Fp8Flavor::fn ? (codes[c] & 0x7F) == 0x7F : codes[c] == 0x80) out[c] = std::numeric_limits<S>::quiet_NaN();
}

// out[c] *= scales[c / block], one block at a time (the products of the decoders below).
template <class S>
void scale_blocks(S* out, std::int64_t k, const float* scales, std::int64_t block) {
  for (std::int64_t c0 = 0, b = 0; c0 < k; c0 += block, ++b) {
    const S s = S(scales[b]);
    const std::int64_t c1 = std::min(k, c0 + block);
    for (std::int64_t c = c0; c < c1; ++c) out[c] *= s;
  }
}

// Elements without a fast decoder above: through the spec codec's 256-entry table (e5m2, e5m2fnuz, ...).
template <class S>
void table_row(const MinifloatSpec& spec, const std::uint8_t* codes, std::int64_t k, const float* scales,
               std::int64_t block, S* out) {
  const float* t = decode_table(spec).value;
  for (std::int64_t c = 0; c < k; ++c) out[c] = S(t[codes[c]]);
  scale_blocks(out, k, scales, block);
}

// e2m1x2: two codes a byte, the even element in the low nibble; decode(code) * scale of its block.
template <class S>
void e2m1_row(const std::uint8_t* bytes, std::int64_t k, const float* scales, std::int64_t block, S* out) {
  for (std::int64_t j = 0; j < k / 2; ++j) {
    out[2 * j] = S(e2m1_bits(bytes[j] & 0xF) * kE2M1Unbias);
    out[2 * j + 1] = S(e2m1_bits(bytes[j] >> 4) * kE2M1Unbias);
  }
  scale_blocks(out, k, scales, block);
}

// One row of k 16-bit elements (bf16, f16), times their scales where the format has any.
template <class S>
void half_row(DType t, const std::uint16_t* p, std::int64_t k, const float* scales, std::int64_t block, S* out) {
  if (t == DType::f16) {
    const float* table = fp16_table().data();
    for (std::int64_t c = 0; c < k; ++c) out[c] = S(table[p[c]]);
  } else {
    for (std::int64_t c = 0; c < k; ++c) out[c] = S(std::bit_cast<float>(std::uint32_t(p[c]) << 16));
  }
  if (scales) scale_blocks(out, k, scales, block);
}

// The one dispatch on the stored element dtype: k elements from `row`, times scales[c / block] (nullptr: the
// format has no scales).
template <class S>
void decode_row(DType t, const std::byte* row, std::int64_t k, const float* scales, std::int64_t block, S* out) {
  const auto* codes = reinterpret_cast<const std::uint8_t*>(row);
  const float one = 1.0f;
  if (!scales && t != DType::bf16 && t != DType::f16) {  // a scaled decoder on an unscaled format: times 1, exact
    scales = &one;
    block = k;
  }
  switch (t) {
    case DType::bf16: case DType::f16:
      return half_row(t, reinterpret_cast<const std::uint16_t*>(row), k, scales, block, out);
    case DType::e4m3fn: return fp8_row(codes, k, Fp8Flavor::fn, scales, block, out);
    case DType::e4m3fnuz: return fp8_row(codes, k, Fp8Flavor::fnuz, scales, block, out);
    case DType::e2m1x2: return e2m1_row(codes, k, scales, block, out);
    default: return table_row(*minifloat_spec_of(t), codes, k, scales, block, out);
  }
}

}  // namespace

template <class S>
void dequantize_rows(const ExpertWeights& w, const QuantScheme& q, WeightMatrix which, std::int64_t e,
                     std::int64_t hidden, std::int64_t inter, std::int64_t r0, std::int64_t r1, S* out,
                     std::int64_t c0, std::int64_t c1) {
  const WeightFormatInfo& f = weight_format_info(q.weight);
  const bool is13 = which == WeightMatrix::w13;
  const Tensor& el = is13 ? w.w13 : w.w2;
  const Tensor& sc = is13 ? w.w13_scale : w.w2_scale;
  const std::int64_t rows = is13 ? 2 * inter : hidden, k = is13 ? hidden : inter;
  if (c1 < 0) c1 = k;
  const std::int64_t width = c1 - c0, rb = row_bytes(f, k);
  const std::byte* first = el.bytes() + (e * rows + r0) * rb + row_bytes(f, c0);
  // The scale grid of expert e, and the scales of one row from column c0 on (c0 sits on a block boundary).
  const std::int64_t cols = scale_grid_cols(f, k), block = scale_block_k(f, k);
  const std::int64_t grid = scale_grid_rows(f, rows, is13) * cols;
  constexpr std::int64_t kChunk = 128;  // E8M0 scales decoded per step (4096 MX elements)
  float decoded[kChunk];
  for (std::int64_t i = 0; i < r1 - r0; ++i) {
    const std::byte* row = first + i * rb;
    S* o = out + i * width;
    const std::int64_t s0 = e * grid + scale_row_of(f, rows, is13, r0 + i) * cols + scale_col_of(f, c0);
    if (f.scale == ScaleKind::e8m0) {
      const std::uint8_t* codes = sc.span<std::uint8_t>().data() + s0;
      for (std::int64_t b0 = 0; b0 * block < width; b0 += kChunk) {
        const std::int64_t n = std::min(kChunk * block, width - b0 * block);
        for (std::int64_t b = 0; b < (n + block - 1) / block; ++b) decoded[b] = e8m0_decode(codes[b0 + b], q.e8m0_edges);
        decode_row(el.dtype(), row + row_bytes(f, b0 * block), n, decoded, block, o + b0 * block);
      }
    } else {
      decode_row(el.dtype(), row, width, f.scale == ScaleKind::f32 ? sc.span<float>().data() + s0 : nullptr, block, o);
    }
  }
}

template void dequantize_rows<float>(const ExpertWeights&, const QuantScheme&, WeightMatrix, std::int64_t,
                                     std::int64_t, std::int64_t, std::int64_t, std::int64_t, float*, std::int64_t,
                                     std::int64_t);
template void dequantize_rows<double>(const ExpertWeights&, const QuantScheme&, WeightMatrix, std::int64_t,
                                      std::int64_t, std::int64_t, std::int64_t, std::int64_t, double*, std::int64_t,
                                      std::int64_t);

}  // namespace moe
