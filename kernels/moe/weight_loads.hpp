// Expert weight elements on the device as decode(code) * scale, formed in fp32 as the contract defines: the scale of
// an element (fp32 per tensor, channel or 128x128 block; E8M0 per 32 along K), single elements (loadw), eight at a
// time (load8w), and the grouped kernels' 16-byte chunks (fetch_chunk, decode_chunk; the chunk decoders use the
// GPU's half-to-float conversion). These are the GPU's weight decoders: a weight format gets its case here
// (docs/adding-a-weight-format.md). Device code of the fused MoE kernels, included through slot_ops.hpp and by
// decode_probe.hip, a copy in each translation unit.
#pragma once
#include <cstdint>
#include "kernels/moe/device_numerics.hpp"

namespace moe::gpu {
namespace {

// The fp32 scales of fp8 weight row `row` of expert e along K: per tensor and per channel one value ([0] for every
// column), per 128x128 block one per 128 columns ([c / 128]); w13 blocks its gate and up halves separately.
__device__ inline const float* fp8_scale_row(const ExpertSet& set, WeightFormat f, bool is13, std::int64_t e, std::int64_t row,
                                             std::int64_t rows, std::int64_t K) {
  const float* sc = static_cast<const float*>(is13 ? set.s13 : set.s2);
  if (f == WeightFormat::fp8_tensor) return sc + e;
  if (f == WeightFormat::fp8_channel) return sc + e * rows + row;
  const std::int64_t nbc = (K + 127) / 128;
  std::int64_t br, nbr;
  if (is13) {
    const std::int64_t inter = rows / 2, half = (inter + 127) / 128;
    br = row < inter ? row / 128 : half + (row - inter) / 128;
    nbr = 2 * half;
  } else {
    br = row / 128;
    nbr = (rows + 127) / 128;
  }
  return sc + (e * nbr + br) * nbc;
}

// The fp32 scale of fp8 weight element (row, c) of expert e.
__device__ inline float fp8_scale(const ExpertSet& set, WeightFormat f, bool is13, std::int64_t e, std::int64_t row,
                                  std::int64_t c, std::int64_t rows, std::int64_t K) {
  return fp8_scale_row(set, f, is13, e, row, rows, K)[f == WeightFormat::fp8_block ? c / 128 : 0];
}

// The E8M0 scale codes of MX weight row `row` of expert e, one per 32 along K: column c's at [c / 32].
__device__ inline const std::uint8_t* mx_scale_row(const ExpertSet& set, bool is13, std::int64_t e, std::int64_t row,
                                                   std::int64_t rows, std::int64_t K) {
  return static_cast<const std::uint8_t*>(is13 ? set.s13 : set.s2) + (e * rows + row) * (K / 32);
}

// The E8M0 scale code of MX weight element (row, c) of expert e.
__device__ inline std::uint32_t mx_scale_code(const ExpertSet& set, bool is13, std::int64_t e, std::int64_t row,
                                              std::int64_t c, std::int64_t rows, std::int64_t K) {
  std::uint32_t code = mx_scale_row(set, is13, e, row, rows, K)[c / 32];
  if (MOE_MUT(e8m0_scale_off_by_one) && is13 && e == MOE_MUT_EXPERT && row == 0 && c < 32) code = (code + 1) & 0xFFu;
  return code;
}

// One weight element: decode(code) * scale formed in fp32 (one rounding), as the contract defines.
// rows/K: the matrix's [rows, K] per expert (w13: [2 inter, H]; w2: [H, inter]). F: the format known at compile
// time (the kernels are instantiated per routed-expert format, so the bf16 path carries no decode code), or -1 to
// read it from the set (a shared expert whose format differs from the routed experts').
template <int F>
__device__ inline float loadw(const ExpertSet& set, bool is13, std::int64_t e, std::int64_t row, std::int64_t c,
                              std::int64_t rows, std::int64_t K) {
  const void* p = is13 ? set.w13 : set.w2;
  const WeightFormat f = F < 0 ? set.wfmt : WeightFormat(F);
  std::int64_t i = (e * rows + row) * K + c;
  if (MOE_MUT(offsets_32bit)) i = std::int64_t(std::uint32_t(i));  // the element offset wraps at 2^32
  switch (f) {
    case WeightFormat::bf16: return load(p, i, DType::bf16);
    case WeightFormat::fp16: return load(p, i, DType::f16);
    case WeightFormat::fp8_tensor: case WeightFormat::fp8_channel: case WeightFormat::fp8_block:
      return e4m3_decode(static_cast<const std::uint8_t*>(p)[i], set.fnuz) * fp8_scale(set, f, is13, e, row, c, rows, K);
    case WeightFormat::mxfp8: case WeightFormat::mxfp4: {
      const float s = e8m0_decode(mx_scale_code(set, is13, e, row, c, rows, K), set.e8m0_triton);
      if (f == WeightFormat::mxfp8) return e4m3_decode(static_cast<const std::uint8_t*>(p)[i], false) * s;
      const std::uint32_t byte = static_cast<const std::uint8_t*>(p)[i / 2];
      const bool high = (c & 1) != (MOE_MUT(fp4_nibbles_swapped) ? 1 : 0);
      return e2m1_decode(high ? byte >> 4 : byte & 0xFu) * s;
    }
  }
  return 0.0f;
}

// A mutant that corrupts single weight elements (a wrapped offset, one scale, swapped nibbles) is compiled in: the
// vector loads then fall back to loadw element by element, where the bug lives. Constant false in the default build.
__device__ inline bool element_mutant(const ExpertSet& set) {
  return MOE_MUT(offsets_32bit) || MOE_MUT(e8m0_scale_off_by_one) || MOE_MUT(fp4_nibbles_swapped);
}

// Eight consecutive weight elements of one row (c and K multiples of 8, so the eight share one scale and the load
// is aligned): one 16-byte load for bf16/fp16, 8 bytes for fp8 and MXFP8, 4 bytes for MXFP4, then the same
// decode(code) * scale per element as loadw.
template <int F>
__device__ inline void load8w(const ExpertSet& set, bool is13, std::int64_t e, std::int64_t row, std::int64_t c,
                              std::int64_t rows, std::int64_t K, float (&w)[8]) {
  const WeightFormat f = F < 0 ? set.wfmt : WeightFormat(F);
  if (element_mutant(set)) {
    for (int q = 0; q < 8; ++q) w[q] = loadw<F>(set, is13, e, row, c + q, rows, K);
    return;
  }
  const void* p = is13 ? set.w13 : set.w2;
  const std::int64_t i = (e * rows + row) * K + c;
  switch (f) {
    case WeightFormat::bf16: load8(p, i, DType::bf16, w); return;
    case WeightFormat::fp16: load8(p, i, DType::f16, w); return;
    case WeightFormat::fp8_tensor: case WeightFormat::fp8_channel: case WeightFormat::fp8_block: case WeightFormat::mxfp8: {
      const uint2 q = *reinterpret_cast<const uint2*>(static_cast<const std::uint8_t*>(p) + i);
      const bool mx = f == WeightFormat::mxfp8;
      const float s = mx ? e8m0_decode(mx_scale_code(set, is13, e, row, c, rows, K), set.e8m0_triton)
                         : fp8_scale(set, f, is13, e, row, c, rows, K);
      const bool fnuz = !mx && set.fnuz;
#pragma unroll
      for (int k = 0; k < 8; ++k) w[k] = e4m3_decode(((k < 4 ? q.x : q.y) >> (8 * (k & 3))) & 0xFFu, fnuz) * s;
      return;
    }
    case WeightFormat::mxfp4: {
      // Element c (even) is the low nibble of byte c/2: in a little-endian word, nibble k is element c + k.
      const std::uint32_t q = *reinterpret_cast<const std::uint32_t*>(static_cast<const std::uint8_t*>(p) + i / 2);
      const float s = e8m0_decode(mx_scale_code(set, is13, e, row, c, rows, K), set.e8m0_triton);
#pragma unroll
      for (int k = 0; k < 8; ++k) w[k] = e2m1_decode((q >> (4 * k)) & 0xFu) * s;
      return;
    }
  }
}

// V consecutive weight elements of one row, eight at a time through load8w: the grouped kernels' path for a format
// known only at run time (F = -1) and for the element mutants (chunked below is false there).
template <int F, int V>
__device__ inline void load_by_8(const ExpertSet& set, bool is13, std::int64_t e, std::int64_t row, std::int64_t c,
                                 std::int64_t rows, std::int64_t K, float (&w)[V]) {
#pragma unroll
  for (int j = 0; j < V / 8; ++j) {
    float part[8];
    load8w<F>(set, is13, e, row, c + 8 * j, rows, K, part);
#pragma unroll
    for (int q = 0; q < 8; ++q) w[8 * j + q] = part[q];
  }
}

// One lane's 16-byte chunk of weight codes (chunk_width(F) elements) and the scale they share, fetched before any
// decoding so that several chunks can be in flight: a 16-element fp8 chunk lies inside one 128x128 block or one
// 32-element MX block, a 32-element MXFP4 chunk is one MX block. c and K are multiples of the chunk width.
struct RawChunk {
  uint4 q;
  float s;
};

template <int F>
__device__ inline RawChunk fetch_chunk(const ExpertSet& set, bool is13, std::int64_t e, std::int64_t row,
                                       std::int64_t c, std::int64_t rows, std::int64_t K) {
  constexpr WeightFormat f = WeightFormat(F);
  const std::uint8_t* p = static_cast<const std::uint8_t*>(is13 ? set.w13 : set.w2);
  const std::int64_t i = (e * rows + row) * K + c;
  const std::int64_t byte = f == WeightFormat::mxfp4 ? i / 2 : (f == WeightFormat::bf16 || f == WeightFormat::fp16) ? 2 * i : i;
  RawChunk r;
  r.q = *reinterpret_cast<const uint4*>(p + byte);
  if constexpr (f == WeightFormat::mxfp4 || f == WeightFormat::mxfp8)
    r.s = e8m0_decode(mx_scale_code(set, is13, e, row, c, rows, K), set.e8m0_triton);
  else if constexpr (f == WeightFormat::bf16 || f == WeightFormat::fp16)
    r.s = 1.0f;
  else
    r.s = fp8_scale(set, f, is13, e, row, c, rows, K);
  return r;
}

// Whether any byte of w is an e4m3 NaN code (fn: the low seven bits all ones; fnuz: 0x80). Byte-parallel: in fn a
// byte's low seven bits plus one reach bit 7 only from 0x7F (no carry leaves the byte); in fnuz w ^ 0x80808080 has a
// zero byte exactly where w holds 0x80 (the classic has-zero-byte test).
__device__ inline std::uint32_t e4m3_nan_bytes(std::uint32_t w, bool fnuz) {
  if (fnuz) {
    const std::uint32_t v = w ^ 0x80808080u;
    return (v - 0x01010101u) & ~v & 0x80808080u;
  }
  return ((w & 0x7F7F7F7Fu) + 0x01010101u) & 0x80808080u;
}

// Word K (0..3) of a chunk, K known at compile time.
template <int K>
__device__ inline std::uint32_t chunk_word(const uint4& q) {
  return K == 0 ? q.x : K == 1 ? q.y : K == 2 ? q.z : q.w;
}

// Elements [8J, 8J + 8) of a chunk as decode(code) * scale, bit for bit as loadw, with few integer operations: the
// code's bits are placed under the fields of an IEEE half, which the GPU converts to fp32 in one floating-point
// instruction. An e4m3 code's sign and seven magnitude bits at half bits 15 and 7..13 are a half worth
// value * 2^-8 (fn, bias 7) or 2^-7 (fnuz, bias 8), subnormals included; an e2m1 code's at bits 15 and 9..11 a half
// worth value * 2^-14. The power of two goes into the scale (exact), so each weight is the same single rounding of
// the same real product decode(code) * scale. Pieces holding a NaN code, or whose scale is not below 2^100
// (overflow, Inf, NaN), take the element-wise decode. The grouped kernels decode piece by piece, so that only 8
// weights per row are live at a time.
template <int F, int J>
__device__ inline void decode_piece(const ExpertSet& set, const RawChunk& r, float (&w)[8]) {
  constexpr WeightFormat f = WeightFormat(F);
  if constexpr (f == WeightFormat::mxfp4) {
    const std::uint32_t q = chunk_word<J>(r.q);  // nibble k is element 8J + k
    if (fabsf(r.s) < 0x1p100f) {
      const float s = r.s * 0x1p14f;
      // Nibbles k and k + 4 (bits 4k, 4k + 16) into the low and high half.
      const std::uint32_t h[4] = {((q << 12) & 0x80008000u) | ((q << 9) & 0x0E000E00u),
                                  ((q << 8) & 0x80008000u) | ((q << 5) & 0x0E000E00u),
                                  ((q << 4) & 0x80008000u) | ((q << 1) & 0x0E000E00u),
                                  (q & 0x80008000u) | ((q >> 3) & 0x0E000E00u)};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        float lo, hi;
        moe_half2_to_floats(h[k], lo, hi);
        w[k] = lo * s;
        w[k + 4] = hi * s;
      }
      return;
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) w[k] = e2m1_decode((q >> (4 * k)) & 0xFu) * r.s;
  } else if constexpr (f == WeightFormat::bf16 || f == WeightFormat::fp16) {
    static_assert(J == 0, "a 16-bit chunk is one piece");
    const std::uint32_t words[4] = {r.q.x, r.q.y, r.q.z, r.q.w};
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const std::uint16_t b = std::uint16_t(words[k / 2] >> (16 * (k % 2)));
      w[k] = f == WeightFormat::bf16 ? __uint_as_float(std::uint32_t(b) << 16) : f16_bits_to_float(b);
    }
  } else {
    const std::uint32_t words[2] = {chunk_word<2 * J>(r.q), chunk_word<2 * J + 1>(r.q)};  // byte k: element 8J + k
    const bool fnuz = f != WeightFormat::mxfp8 && set.fnuz;
    if ((e4m3_nan_bytes(words[0], fnuz) | e4m3_nan_bytes(words[1], fnuz)) == 0u && fabsf(r.s) < 0x1p100f) {
      const float s = r.s * (fnuz ? 0x1p7f : 0x1p8f);
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const std::uint32_t q = words[i];
        const std::uint32_t even = ((q << 8) & 0x80008000u) | ((q << 7) & 0x3F803F80u);  // bytes 0 and 2
        const std::uint32_t odd = (q & 0x80008000u) | ((q >> 1) & 0x3F803F80u);          // bytes 1 and 3
        float b0, b1, b2, b3;
        moe_half2_to_floats(even, b0, b2);
        moe_half2_to_floats(odd, b1, b3);
        w[4 * i] = b0 * s;
        w[4 * i + 1] = b1 * s;
        w[4 * i + 2] = b2 * s;
        w[4 * i + 3] = b3 * s;
      }
      return;
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) w[k] = e4m3_decode((words[k / 4] >> (8 * (k % 4))) & 0xFFu, fnuz) * r.s;
  }
}

// The whole chunk (chunk_width(F) elements), piece by piece.
template <int F, int J = 0>
__device__ inline void decode_chunk(const ExpertSet& set, const RawChunk& r, float (&w)[kChunkWidth<F>]) {
  if constexpr (J < kChunkWidth<F> / 8) {
    float part[8];
    decode_piece<F, J>(set, r, part);
#pragma unroll
    for (int q = 0; q < 8; ++q) w[8 * J + q] = part[q];
    decode_chunk<F, J + 1>(set, r, w);
  }
}

// Whether fetch_chunk/decode_chunk serve routed format F (known at compile time) in this build: not for a format
// known only at run time (F = -1: a shared set in another format) nor on the mutants' element path.
template <int F>
__device__ inline bool chunked(const ExpertSet& set) {
  return F >= 0 && !element_mutant(set);
}

}  // namespace
}  // namespace moe::gpu
