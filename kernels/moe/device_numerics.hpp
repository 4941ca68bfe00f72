// Number formats on the device, by bit arithmetic (no fp8/fp4 hardware assumed): 16-bit float loads, stores and
// rounding; e4m3 (fn and fnuz), e2m1 and E8M0 decoding; activation quantization exactly as the contract defines it.
// The expert weight elements built on these are in weight_loads.hpp. Device code of the fused MoE kernels, a copy in
// each translation unit (internal linkage; the mutant build, kernels/mutants/fused_moe_mutants.hip, compiles its
// own).
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
