// Number formats on the device, by bit arithmetic (no fp8/fp4 hardware assumed; the chunk decoders use the GPU's
// half-to-float conversion): 16-bit float loads, stores and rounding; e4m3 (fn and fnuz), e2m1 and E8M0 decoding;
// expert weight elements as decode(code) * scale; activation quantization exactly as the contract defines it.
// Device code of the fused MoE kernels: included by kernels/moe/fused_moe.hip, mma_stages.hip and decode_probe.hip,
// a copy in each translation unit (internal linkage; the mutant build, kernels/mutants/fused_moe_mutants.hip,
// compiles its own).
#pragma once
#include <cstdint>
#include "kernels/moe/fused_moe.hpp"
#include "kernels/mutants/mutant_hooks.hpp"
#include "kernels/runtime/hip_compat.hpp"

namespace moe::gpu {
namespace {

// IEEE half -> float by bits (no half type needed on either vendor). A value, not an address: a local whose
// address is taken can end up in stack memory.
__device__ inline float f16_bits_to_float(std::uint16_t b) {
  const std::uint32_t s = (b >> 15) & 1u, e = (b >> 10) & 31u, m = b & 1023u;
  float v;
  if (e == 0) v = float(m) * 5.9604644775390625e-08f;  // m * 2^-24
  else if (e == 31) v = m ? __uint_as_float(0x7FC00000u) : __uint_as_float(0x7F800000u);
  else v = __uint_as_float(((e + 112u) << 23) | (m << 13));
  return s ? -v : v;
}

__device__ inline float load(const void* p, std::int64_t i, DType t) {
  if (t == DType::f32) return static_cast<const float*>(p)[i];
  const std::uint16_t b = static_cast<const std::uint16_t*>(p)[i];
  if (t == DType::bf16) return __uint_as_float(std::uint32_t(b) << 16);
  return f16_bits_to_float(b);
}

// Eight consecutive 16-bit elements in one 16-byte load (callers guarantee 8-element alignment), decoded to floats.
__device__ inline void load8(const void* p, std::int64_t i, DType t, float (&v)[8]) {
  const uint4 q = *reinterpret_cast<const uint4*>(static_cast<const std::uint16_t*>(p) + i);
  const std::uint32_t w[4] = {q.x, q.y, q.z, q.w};
  for (int k = 0; k < 4; ++k) {
    const std::uint16_t lo = std::uint16_t(w[k] & 0xFFFFu), hi = std::uint16_t(w[k] >> 16);
    if (t == DType::bf16) {
      v[2 * k] = __uint_as_float(std::uint32_t(lo) << 16);
      v[2 * k + 1] = __uint_as_float(std::uint32_t(hi) << 16);
    } else {
      v[2 * k] = f16_bits_to_float(lo);
      v[2 * k + 1] = f16_bits_to_float(hi);
    }
  }
}

__device__ inline std::uint16_t to_bf16(float f) {
  std::uint32_t u = __float_as_uint(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
  u += 0x7FFFu + ((u >> 16) & 1u);
  return std::uint16_t(u >> 16);
}

__device__ inline std::uint16_t to_f16(float f) {
  // Round to nearest even, overflow to Inf, subnormals, NaN -> 0x7E00.
  const std::uint32_t u = __float_as_uint(f);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7E00;
  if (a >= 0x477FF000u) return std::uint16_t(sign | 0x7C00u);  // >= 65520 rounds to Inf
  if (a < 0x38800000u) {                                        // below 2^-14: subnormal half
    const float y = __uint_as_float(a) * 16777216.0f;           // * 2^24: now the integer mantissa, < 1024
    const float r = (y + 8388608.0f) - 8388608.0f;              // round half to even
    return std::uint16_t(sign | std::uint32_t(r));
  }
  const std::uint32_t r = a + 0xFFFu + ((a >> 13) & 1u);
  return std::uint16_t(sign | ((r >> 13) - (112u << 10)));
}

__device__ inline float round_to(float v, DType t) {
  if (t == DType::bf16) return __uint_as_float(std::uint32_t(to_bf16(v)) << 16);
  if (t == DType::f16) {
    const std::uint16_t h = to_f16(v);
    return f16_bits_to_float(h);
  }
  return v;
}

__device__ inline void store(void* p, std::int64_t i, float v, DType t) {
  if (t == DType::f32) static_cast<float*>(p)[i] = v;
  else if (t == DType::bf16) static_cast<std::uint16_t*>(p)[i] = to_bf16(v);
  else static_cast<std::uint16_t*>(p)[i] = to_f16(v);
}

// ---- Formats, by bit arithmetic (no fp8/fp4 hardware support assumed; fnuz decoded in software everywhere) ----
// e4m3: the code's exponent and mantissa placed under fp32's fields give 2^(e-127) (1 + m/8), or (m/8) 2^-126 for
// e = 0; one exact multiplication by 2^(127 - bias) yields the value of every finite code.
__device__ inline float e4m3_decode(std::uint32_t b, bool fnuz) {
  if (fnuz ? b == 0x80u : (b & 0x7Fu) == 0x7Fu) return __uint_as_float(0x7FC00000u);
  const float m = __uint_as_float((b & 0x7Fu) << 20) * (fnuz ? 0x1p119f : 0x1p120f);
  return (b & 0x80u) ? -m : m;
}
// e2m1 (s e e m): the same placement; times 2^(127 - 1).
__device__ inline float e2m1_decode(std::uint32_t nib) {
  const float m = __uint_as_float((nib & 0x7u) << 22) * 0x1p126f;
  return (nib & 0x8u) ? -m : m;
}
__device__ inline float e8m0_decode(std::uint32_t code, bool triton) {
  if (code == 0u) return triton ? 0.0f : __uint_as_float(0x00400000u);  // 2^-127, an fp32 subnormal
  if (code == 255u) return triton ? __uint_as_float(0x7F800000u) : __uint_as_float(0x7FC00000u);
  return __uint_as_float(code << 23);
}
// Round to the e4m3 grid (nearest even; |v| already within the format's range after the clamp), as a value.
__device__ inline float e4m3_round(float v, bool fnuz) {
  if (v != v) return v;
  const float a = fabsf(v);
  int e;
  frexpf(a, &e);                                   // a = f 2^e, f in [0.5, 1): floor(log2 a) = e - 1
  const int ex = max(e - 1, fnuz ? -7 : -6);       // below the smallest normal: the subnormal quantum
  const float q = ldexpf(1.0f, ex - 3);
  const float r = rintf(a / q) * q;                // a / q and the product are exact (q a power of two)
  if (r == 0.0f) return fnuz ? 0.0f : copysignf(0.0f, v);  // fnuz has no -0
  return copysignf(r, v);
}

__device__ inline float scale_pow2_ceil(float s) {
  int e;
  const float f = frexpf(s, &e);
  return f == 0.5f ? s : ldexpf(1.0f, e);
}
__device__ inline int floor_log2(float a) { int e; frexpf(a, &e); return e - 1; }
__device__ inline int ceil_log2(float a) { int e; const float f = frexpf(a, &e); return f == 0.5f ? e - 1 : e; }
// OCP MX shared exponent of a block for an e4m3 element (emax 8, max finite 448), in the case's mode.
__device__ inline int mx_shared_exponent(float amax, MxScaleMode mode) {
  if (!(amax > 0.0f)) return -127;
  if (isinf(amax)) return 127;
  int x;
  if (mode == MxScaleMode::floor) x = floor_log2(amax) - 8;
  else if (mode == MxScaleMode::rceil) x = ceil_log2(amax / 448.0f);
  else {
    const float rounded = __uint_as_float((__float_as_uint(amax) + (1u << 19)) & 0xFF800000u);
    x = isinf(rounded) ? 128 - 8 : floor_log2(rounded) - 8;
  }
  return min(max(x, -127), 127);
}

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
  if (MOE_MUT(set, e8m0_scale_off_by_one) && is13 && e == set.mut_expert && row == 0 && c < 32) code = (code + 1) & 0xFFu;
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
  if (MOE_MUT(set, offsets_32bit)) i = std::int64_t(std::uint32_t(i));  // the element offset wraps at 2^32
  switch (f) {
    case WeightFormat::bf16: return load(p, i, DType::bf16);
    case WeightFormat::fp16: return load(p, i, DType::f16);
    case WeightFormat::fp8_tensor: case WeightFormat::fp8_channel: case WeightFormat::fp8_block:
      return e4m3_decode(static_cast<const std::uint8_t*>(p)[i], set.fnuz) * fp8_scale(set, f, is13, e, row, c, rows, K);
    case WeightFormat::mxfp8: case WeightFormat::mxfp4: {
      const float s = e8m0_decode(mx_scale_code(set, is13, e, row, c, rows, K), set.e8m0_triton);
      if (f == WeightFormat::mxfp8) return e4m3_decode(static_cast<const std::uint8_t*>(p)[i], false) * s;
      const std::uint32_t byte = static_cast<const std::uint8_t*>(p)[i / 2];
      const bool high = (c & 1) != (MOE_MUT(set, fp4_nibbles_swapped) ? 1 : 0);
      return e2m1_decode(high ? byte >> 4 : byte & 0xFu) * s;
    }
  }
  return 0.0f;
}

// A mutant that corrupts single weight elements (a wrapped offset, one scale, swapped nibbles) is compiled in: the
// vector loads then fall back to loadw element by element, where the bug lives. Constant false in the default build.
__device__ inline bool element_mutant(const ExpertSet& set) {
  return MOE_MUT(set, offsets_32bit) || MOE_MUT(set, e8m0_scale_off_by_one) || MOE_MUT(set, fp4_nibbles_swapped);
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

// Quantizes then dequantizes values first, first + step, ... < n of one group in place, as the contract's activation
// recipe does, given the group's amax (the maximum of |v| over the group, NaN never winning): every caller forms the
// same scale from it.
__device__ inline void fake_quantize_values(float* v, std::int64_t n, const ActQuant& q, float forced_scale, float amax,
                                            std::int64_t first, std::int64_t step) {
  if (q.kind == ActFormat::mxfp8) {
    const int se = mx_shared_exponent(amax, q.mx_mode);
    const float scale = e8m0_decode(std::uint32_t(se + 127), q.e8m0_triton);
    for (std::int64_t i = first; i < n; i += step) {
      float x = ldexpf(v[i], -se);  // exact: a power-of-two scale
      x = x != x ? x : fminf(fmaxf(x, -448.0f), 448.0f);  // saturate to the largest finite e4m3fn
      v[i] = e4m3_round(x, false) * scale;
    }
    return;
  }
  float s = fmaxf(amax, q.amax_floor) / q.qmax;
  if (q.scale_pow2) s = scale_pow2_ceil(s);
  if (forced_scale > 0.0f) s = forced_scale;  // per_tensor_act_scale mutant only
  for (std::int64_t i = first; i < n; i += step) {
    float x = v[i] / s;
    x = x < -q.qmax ? -q.qmax : (x > q.qmax ? q.qmax : x);  // NaN passes through
    v[i] = e4m3_round(x, q.fnuz) * s;
  }
}

// The amax of values first, first + step, ... < n, then met across the kLanesQ lanes of a group by a shuffle
// butterfly (a maximum: exact in any order). NaN elements never win, as in the contract's loop. All kLanesQ lanes
// call it (`active` false contributes 0 and only takes part in the shuffles).
constexpr int kLanesQ = 16;
__device__ inline float group_amax(const float* v, std::int64_t n, std::int64_t first, std::int64_t step, bool active) {
  float amax = 0.0f;
  if (active)
    for (std::int64_t i = first; i < n; i += step) {
      const float a = fabsf(v[i]);
      amax = a > amax ? a : amax;
    }
  for (int off = kLanesQ / 2; off > 0; off >>= 1) {
    const float o = MOE_SHFL_XOR(amax, off, kLanesQ);
    amax = o > amax ? o : amax;
  }
  return amax;
}

// One group of n values (stride 1) by the group's kLanesQ lanes (lane = 0..kLanesQ-1), each taking every kLanesQ-th
// element. All kLanesQ lanes call it (active or not).
__device__ inline void fake_quantize_group(float* v, std::int64_t n, const ActQuant& q, float forced_scale, int lane,
                                           bool active) {
  const float amax = group_amax(v, n, lane, kLanesQ, active);
  if (active) fake_quantize_values(v, n, q, forced_scale, amax, lane, kLanesQ);
}

}  // namespace
}  // namespace moe::gpu
