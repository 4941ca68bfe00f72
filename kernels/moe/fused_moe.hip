// Fused MoE kernels (bf16/fp16, fp8 and MX weights; quantized activations). Written against the HIP runtime API
// (kernels/runtime/hip_compat.hpp maps it to CUDA on NVIDIA). No warp-size assumption anywhere: block reductions go
// through shared memory with any block size, and lane exchanges stay within groups of 16 lanes.
//
// Work decomposition: a "slot" is one (token, routed k) or (token, shared expert) pair, slot = t * (k + S) + j.
//  grouped (two-stage, rows a multiple of 8; the default): slots are sorted by expert set on the device (count,
//             scan, scatter); stage 1 grid (tile of 16 intermediate rows, set) reads each gate/up row once per pass
//             over up to 8 of the set's tokens -> activation -> rounded to the intermediate dtype -> mid[slot, i];
//             stage 2 grid (tile of 16 hidden rows, set) likewise for w2, then reduces (atomic into acc, or per-slot
//             rows). Every slot's sums run over the same lanes in the same order whichever pass holds it.
//  row-wise two-stage (other shapes): stage1 grid (slot, inter tile of kRows) computes kRows gate/up pairs per
//             block; stage2 grid (slot, hidden tile of kRows); each slot reads its expert's weights itself.
//  one-stage: one block per slot does both stages with the intermediate in shared memory (asked for by the case).
#include <cstdint>
#include <type_traits>

#include "kernels/moe/fused_moe.hpp"
#include "kernels/mutants/mutation_id.hpp"
#include "kernels/runtime/gpu_check.hpp"
#include "kernels/runtime/hip_compat.hpp"

// The mutant catalog lives in this file, compiled in only when kernels/mutants/fused_moe_mutants.hip includes it with
// MOE_GPU_MUTANTS defined; in the default build every MOE_MUT(...) is the constant false and its code is gone.
#ifdef MOE_GPU_MUTANTS
#define MOE_MUT(args, m) ((args).mutation == int(::moe::Mutation::m))
#define MOE_LAUNCH_FUSED_MOE launch_fused_moe_mutant
#else
#define MOE_MUT(args, m) false
#define MOE_LAUNCH_FUSED_MOE launch_fused_moe
#endif

namespace moe::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kRows = 8;
constexpr std::int64_t kOneStageMaxInter = 6144;  // 24 KiB of shared memory beside the 16 KiB reduction

__device__ inline float load(const void* p, std::int64_t i, ElemType t) {
  if (t == ElemType::f32) return static_cast<const float*>(p)[i];
  const std::uint16_t b = static_cast<const std::uint16_t*>(p)[i];
  if (t == ElemType::bf16) return __uint_as_float(std::uint32_t(b) << 16);
  // IEEE half -> float by bits (no half type needed on either vendor).
  const std::uint32_t s = (b >> 15) & 1u, e = (b >> 10) & 31u, m = b & 1023u;
  float v;
  if (e == 0) v = float(m) * 5.9604644775390625e-08f;  // m * 2^-24
  else if (e == 31) v = m ? __uint_as_float(0x7FC00000u) : __uint_as_float(0x7F800000u);
  else v = __uint_as_float(((e + 112u) << 23) | (m << 13));
  return s ? -v : v;
}

// Eight consecutive 16-bit elements in one 16-byte load (callers guarantee 8-element alignment), decoded to floats.
__device__ inline void load8(const void* p, std::int64_t i, ElemType t, float (&v)[8]) {
  const uint4 q = *reinterpret_cast<const uint4*>(static_cast<const std::uint16_t*>(p) + i);
  const std::uint32_t w[4] = {q.x, q.y, q.z, q.w};
  for (int k = 0; k < 4; ++k) {
    const std::uint16_t lo = std::uint16_t(w[k] & 0xFFFFu), hi = std::uint16_t(w[k] >> 16);
    if (t == ElemType::bf16) {
      v[2 * k] = __uint_as_float(std::uint32_t(lo) << 16);
      v[2 * k + 1] = __uint_as_float(std::uint32_t(hi) << 16);
    } else {
      v[2 * k] = load(&lo, 0, ElemType::f16);
      v[2 * k + 1] = load(&hi, 0, ElemType::f16);
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

__device__ inline float round_to(float v, ElemType t) {
  if (t == ElemType::bf16) return __uint_as_float(std::uint32_t(to_bf16(v)) << 16);
  if (t == ElemType::f16) {
    const std::uint16_t h = to_f16(v);
    return load(&h, 0, ElemType::f16);
  }
  return v;
}

__device__ inline void store(void* p, std::int64_t i, float v, ElemType t) {
  if (t == ElemType::f32) static_cast<float*>(p)[i] = v;
  else if (t == ElemType::bf16) static_cast<std::uint16_t*>(p)[i] = to_bf16(v);
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
__device__ inline int mx_shared_exponent(float amax, MxMode mode) {
  if (!(amax > 0.0f)) return -127;
  if (isinf(amax)) return 127;
  int x;
  if (mode == MxMode::floor) x = floor_log2(amax) - 8;
  else if (mode == MxMode::rceil) x = ceil_log2(amax / 448.0f);
  else {
    const float rounded = __uint_as_float((__float_as_uint(amax) + (1u << 19)) & 0xFF800000u);
    x = isinf(rounded) ? 128 - 8 : floor_log2(rounded) - 8;
  }
  return min(max(x, -127), 127);
}

// The fp32 scale of fp8 weight element (row, c) of expert e: per tensor, per output channel, or per 128x128 block
// (w13 blocks its gate and up halves separately).
__device__ inline float fp8_scale(const ExpertSet& set, WFormat f, bool is13, std::int64_t e, std::int64_t row,
                                  std::int64_t c, std::int64_t rows, std::int64_t K) {
  const float* sc = static_cast<const float*>(is13 ? set.s13 : set.s2);
  if (f == WFormat::fp8_tensor) return sc[e];
  if (f == WFormat::fp8_channel) return sc[e * rows + row];
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
  return sc[(e * nbr + br) * nbc + c / 128];
}

// The E8M0 scale code of MX weight element (row, c) of expert e (one per 32 along K).
__device__ inline std::uint32_t mx_scale_code(const ExpertSet& set, bool is13, std::int64_t e, std::int64_t row,
                                              std::int64_t c, std::int64_t rows, std::int64_t K) {
  const std::uint8_t* sc = static_cast<const std::uint8_t*>(is13 ? set.s13 : set.s2);
  std::uint32_t code = sc[(e * rows + row) * (K / 32) + c / 32];
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
  const WFormat f = F < 0 ? set.wfmt : WFormat(F);
  std::int64_t i = (e * rows + row) * K + c;
  if (MOE_MUT(set, offsets_32bit)) i = std::int64_t(std::uint32_t(i));  // the element offset wraps at 2^32
  switch (f) {
    case WFormat::bf16: return load(p, i, ElemType::bf16);
    case WFormat::f16: return load(p, i, ElemType::f16);
    case WFormat::fp8_tensor: case WFormat::fp8_channel: case WFormat::fp8_block:
      return e4m3_decode(static_cast<const std::uint8_t*>(p)[i], set.fnuz) * fp8_scale(set, f, is13, e, row, c, rows, K);
    case WFormat::mxfp8: case WFormat::mxfp4: {
      const float s = e8m0_decode(mx_scale_code(set, is13, e, row, c, rows, K), set.e8m0_triton);
      if (f == WFormat::mxfp8) return e4m3_decode(static_cast<const std::uint8_t*>(p)[i], false) * s;
      const std::uint32_t byte = static_cast<const std::uint8_t*>(p)[i / 2];
      const bool high = (c & 1) != (MOE_MUT(set, fp4_nibbles_swapped) ? 1 : 0);
      return e2m1_decode(high ? byte >> 4 : byte & 0xFu) * s;
    }
  }
  return 0.0f;
}

// Eight consecutive weight elements of one row (c and K multiples of 8, so the eight share one scale and the load
// is aligned): one 16-byte load for bf16/fp16, 8 bytes for fp8 and MXFP8, 4 bytes for MXFP4, then the same
// decode(code) * scale per element as loadw.
template <int F>
__device__ inline void load8w(const ExpertSet& set, bool is13, std::int64_t e, std::int64_t row, std::int64_t c,
                              std::int64_t rows, std::int64_t K, float (&w)[8]) {
  const WFormat f = F < 0 ? set.wfmt : WFormat(F);
  if (MOE_MUT(set, offsets_32bit) || MOE_MUT(set, e8m0_scale_off_by_one) || MOE_MUT(set, fp4_nibbles_swapped)) {
    for (int q = 0; q < 8; ++q) w[q] = loadw<F>(set, is13, e, row, c + q, rows, K);  // the mutants' element path
    return;
  }
  const void* p = is13 ? set.w13 : set.w2;
  const std::int64_t i = (e * rows + row) * K + c;
  switch (f) {
    case WFormat::bf16: load8(p, i, ElemType::bf16, w); return;
    case WFormat::f16: load8(p, i, ElemType::f16, w); return;
    case WFormat::fp8_tensor: case WFormat::fp8_channel: case WFormat::fp8_block: case WFormat::mxfp8: {
      const uint2 q = *reinterpret_cast<const uint2*>(static_cast<const std::uint8_t*>(p) + i);
      const bool mx = f == WFormat::mxfp8;
      const float s = mx ? e8m0_decode(mx_scale_code(set, is13, e, row, c, rows, K), set.e8m0_triton)
                         : fp8_scale(set, f, is13, e, row, c, rows, K);
      const bool fnuz = !mx && set.fnuz;
#pragma unroll
      for (int k = 0; k < 8; ++k) w[k] = e4m3_decode(((k < 4 ? q.x : q.y) >> (8 * (k & 3))) & 0xFFu, fnuz) * s;
      return;
    }
    case WFormat::mxfp4: {
      // Element c (even) is the low nibble of byte c/2: in a little-endian word, nibble k is element c + k.
      const std::uint32_t q = *reinterpret_cast<const std::uint32_t*>(static_cast<const std::uint8_t*>(p) + i / 2);
      const float s = e8m0_decode(mx_scale_code(set, is13, e, row, c, rows, K), set.e8m0_triton);
#pragma unroll
      for (int k = 0; k < 8; ++k) w[k] = e2m1_decode((q >> (4 * k)) & 0xFu) * s;
      return;
    }
  }
}

// Quantizes then dequantizes one group of n values (stride 1) in place, as the contract's activation recipe does.
__device__ void fake_quantize_group(float* v, std::int64_t n, const ActQuant& q, float forced_scale = 0.0f) {
  float amax = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) {
    const float a = fabsf(v[i]);
    amax = a > amax ? a : amax;
  }
  if (q.kind == AQuant::mxfp8) {
    const int se = mx_shared_exponent(amax, q.mx_mode);
    const float scale = e8m0_decode(std::uint32_t(se + 127), q.e8m0_triton);
    for (std::int64_t i = 0; i < n; ++i) {
      float x = ldexpf(v[i], -se);  // exact: a power-of-two scale
      x = x != x ? x : fminf(fmaxf(x, -448.0f), 448.0f);  // saturate to the largest finite e4m3fn
      v[i] = e4m3_round(x, false) * scale;
    }
    return;
  }
  float s = fmaxf(amax, q.amax_floor) / q.qmax;
  if (q.scale_pow2) s = scale_pow2_ceil(s);
  if (forced_scale > 0.0f) s = forced_scale;  // per_tensor_act_scale mutant only
  for (std::int64_t i = 0; i < n; ++i) {
    float x = v[i] / s;
    x = x < -q.qmax ? -q.qmax : (x > q.qmax ? q.qmax : x);  // NaN passes through
    v[i] = e4m3_round(x, q.fnuz) * s;
  }
}

__device__ inline float activate(float g, float u, const FusedMoeArgs& a, bool clamp) {
  switch (a.act) {
    case ActKind::silu: return g / (1.0f + expf(-g)) * u;
    case ActKind::gelu_tanh: return 0.5f * g * (1.0f + tanhf(0.7978845608028654f * (g + 0.044715f * g * g * g))) * u;
    case ActKind::gelu_erf: return 0.5f * g * (1.0f + erff(g * 0.7071067811865476f)) * u;
    case ActKind::swiglu_oai:
      if (clamp) {
        g = fminf(g, a.limit);
        u = fmaxf(fminf(u, a.limit), -a.limit);
      }
      return (u + 1.0f) * g / (1.0f + expf(-a.alpha * g));
  }
  return 0.0f;
}

struct SlotInfo {
  bool valid;
  bool shared;
  std::int64_t token, expert;  // expert: index within its set
  float weight;
  std::int64_t slot;
};

__device__ inline SlotInfo slot_info(const FusedMoeArgs& a, std::int64_t slot) {
  const int per = a.topk + a.n_shared;
  const std::int64_t t = slot / per;
  const int j = int(slot % per);
  if (j >= a.topk) return {!MOE_MUT(a, shared_expert_dropped), true, t, std::int64_t(j - a.topk), 1.0f, slot};
  std::int64_t g = a.topk_ids[t * a.topk + j] - a.first_local_expert;
  bool valid = g >= 0 && g < a.local_experts;
  if (!valid && MOE_MUT(a, ep_sums_nonlocal)) {
    g = ((g % a.local_experts) + a.local_experts) % a.local_experts;
    valid = true;
  }
  if (valid && MOE_MUT(a, one_token_wrong_expert) && t == 0 && j == 0) g = (g + 1) % a.local_experts;
  float w = a.topk_weights[t * a.topk + j];
  if (MOE_MUT(a, router_weight_dropped)) w = 1.0f;
  if (MOE_MUT(a, router_weight_twice)) w *= w;
  if (MOE_MUT(a, routed_scaling_twice)) w *= a.mut_routed_scaling;
  return {valid, false, t, g, w, slot};
}

// Stage-1 row pair for intermediate index i in the stored layout.
__device__ inline void gate_up_rows(const FusedMoeArgs& a, std::int64_t inter, std::int64_t i, std::int64_t& g,
                                    std::int64_t& u) {
  if (a.layout == LayoutKind::gate_up) { g = i; u = inter + i; }
  else if (a.layout == LayoutKind::up_gate) { u = i; g = inter + i; }
  else { g = 2 * i; u = 2 * i + 1; }
  if (MOE_MUT(a, swiglu_chunked_split) && a.layout == LayoutKind::interleaved) { g = i; u = inter + i; }
  if (MOE_MUT(a, gate_up_swapped) && a.layout != LayoutKind::interleaved) { const std::int64_t x = g; g = u; u = x; }
}

// part + x * w; the bf16_accumulation mutant rounds the running sum to bf16 at every step.
template <class Args>
__device__ inline float accumulate(const Args& a, float part, float x, float w) {
  if (MOE_MUT(a, bf16_accumulation)) return __uint_as_float(std::uint32_t(to_bf16(part + x * w)) << 16);
  return part + x * w;
}

// The stage-1 input element c of a slot's token (router weight on the input: x * w rounded to the input dtype).
__device__ inline float input_at(const FusedMoeArgs& a, const SlotInfo& s, std::int64_t c) {
  if (a.xq_routed) {  // quantized activations, prepared by prepare_inputs_kernel + quantize_rows_kernel
    if (s.shared) return a.xq_shared[s.token * a.hidden + c];
    return a.xq_routed[(a.weight_on_input ? s.slot : s.token) * a.hidden + c];
  }
  const float x = load(a.x, s.token * a.hidden + c, a.in_type);
  return (a.weight_on_input && !s.shared) ? round_to(x * s.weight, a.in_type) : x;
}

// Block-wide sums of kRows * 2 partials per thread (shared-memory tree: any block size that is a power of two).
template <int N>
__device__ inline void block_sum(float (&v)[N], float* red) {
  for (int r = 0; r < N; ++r) red[r * kThreads + threadIdx.x] = v[r];
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride >>= 1) {
    if (int(threadIdx.x) < stride)
      for (int r = 0; r < N; ++r) red[r * kThreads + threadIdx.x] += red[r * kThreads + threadIdx.x + stride];
    __syncthreads();
  }
  for (int r = 0; r < N; ++r) v[r] = red[r * kThreads];
  __syncthreads();
}

// Computes kRows intermediate values [i0, i0 + kRows) of one slot into dst (activation, rounded).
template <int F>
__device__ void stage1_rows(const FusedMoeArgs& a, const SlotInfo& s, std::int64_t i0, float* red, float* dst) {
  const ExpertSet& set = s.shared ? a.shared : a.routed;
  if (F >= 0 && s.shared && a.shared.wfmt != WFormat(F)) {
    stage1_rows<-1>(a, s, i0, red, dst);
    return;
  }
  const std::int64_t inter = set.inter, h = a.hidden;
  float part[2 * kRows];
  std::int64_t rg[kRows], ru[kRows];
  for (int r = 0; r < kRows; ++r) {
    part[2 * r] = part[2 * r + 1] = 0.0f;
    gate_up_rows(a, inter, i0 + r < inter ? i0 + r : inter - 1, rg[r], ru[r]);
  }
  if (h % 8 == 0) {
    // 16-byte loads: each thread takes 8 consecutive columns per row per step.
    for (std::int64_t c = std::int64_t(threadIdx.x) * 8; c < h; c += std::int64_t(kThreads) * 8) {
      float x[8], w[8];
      for (int q = 0; q < 8; ++q) x[q] = input_at(a, s, c + q);
      for (int r = 0; r < kRows; ++r) {
        load8w<F>(set, true, s.expert, rg[r], c, 2 * inter, h, w);
        for (int q = 0; q < 8; ++q) part[2 * r] = accumulate(a, part[2 * r], x[q], w[q]);
        load8w<F>(set, true, s.expert, ru[r], c, 2 * inter, h, w);
        for (int q = 0; q < 8; ++q) part[2 * r + 1] = accumulate(a, part[2 * r + 1], x[q], w[q]);
      }
    }
  } else {
    for (std::int64_t c = threadIdx.x; c < h; c += kThreads) {
      const float x = input_at(a, s, c);
      for (int r = 0; r < kRows; ++r) {
        part[2 * r] = accumulate(a, part[2 * r], x, loadw<F>(set, true, s.expert, rg[r], c, 2 * inter, h));
        part[2 * r + 1] = accumulate(a, part[2 * r + 1], x, loadw<F>(set, true, s.expert, ru[r], c, 2 * inter, h));
      }
    }
  }
  block_sum(part, red);
  if (threadIdx.x == 0) {
    for (int r = 0; r < kRows; ++r) {
      const std::int64_t i = i0 + r;
      if (i >= inter) break;
      float g = part[2 * r], u = part[2 * r + 1];
      if (set.b13 && !MOE_MUT(a, biases_dropped)) {
        g += set.b13[s.expert * 2 * inter + rg[r]];
        u += set.b13[s.expert * 2 * inter + ru[r]];
      }
      bool clamp = set.clamp;
      if (MOE_MUT(a, swiglu_clamp_dropped)) clamp = false;
      if (MOE_MUT(a, shared_clamp_when_disabled) && s.shared) clamp = true;
      dst[r] = round_to(activate(g, u, a, clamp), a.mid_type);
    }
  }
  __syncthreads();
}

// Down projection of kRows hidden outputs [h0, h0 + kRows) of one slot from its intermediate `z`, then reduce.
template <int F>
__device__ void stage2_rows(const FusedMoeArgs& a, const SlotInfo& s, std::int64_t slot, std::int64_t h0,
                            const float* z, float* red) {
  const ExpertSet& set = s.shared ? a.shared : a.routed;
  if (F >= 0 && s.shared && a.shared.wfmt != WFormat(F)) {
    stage2_rows<-1>(a, s, slot, h0, z, red);
    return;
  }
  const std::int64_t inter = set.inter, h = a.hidden;
  float part[kRows];
  for (int r = 0; r < kRows; ++r) part[r] = 0.0f;
  std::int64_t rows[kRows];
  for (int r = 0; r < kRows; ++r) rows[r] = h0 + r < h ? h0 + r : h - 1;
  if (inter % 8 == 0) {
    for (std::int64_t i = std::int64_t(threadIdx.x) * 8; i < inter; i += std::int64_t(kThreads) * 8) {
      float w[8];
      for (int r = 0; r < kRows; ++r) {
        load8w<F>(set, false, s.expert, rows[r], i, h, inter, w);
        for (int q = 0; q < 8; ++q) part[r] = accumulate(a, part[r], z[i + q], w[q]);
      }
    }
  } else {
    for (std::int64_t i = threadIdx.x; i < inter; i += kThreads) {
      const float zi = z[i];
      for (int r = 0; r < kRows; ++r) part[r] = accumulate(a, part[r], zi, loadw<F>(set, false, s.expert, rows[r], i, h, inter));
    }
  }
  block_sum(part, red);
  if (threadIdx.x == 0) {
    const float w = (a.weight_on_input && !s.shared) ? 1.0f : s.weight;
    for (int r = 0; r < kRows && h0 + r < h; ++r) {
      float y = part[r];
      if (set.b2 && !MOE_MUT(a, biases_dropped)) y += set.b2[s.expert * h + h0 + r];
      y *= w;
      // lost_atomic_update: a non-atomic read-modify-write whose update from token 0's second slot another lane
      // overwrote (the host kernel's version of the same bug drops the same update).
      if (MOE_MUT(a, lost_atomic_update) && a.reduce == ReduceKind::fused_atomic && s.token == 0 &&
          slot % (a.topk + a.n_shared) == 1)
        continue;
      if (a.reduce == ReduceKind::fused_atomic) atomicAdd(&a.acc[s.token * h + h0 + r], y);
      else a.slots[slot * h + h0 + r] = y;
    }
  }
}

template <int F>
__global__ void __launch_bounds__(kThreads) stage1_kernel(FusedMoeArgs a, std::int64_t mid_stride) {
  __shared__ float red[2 * kRows * kThreads];
  __shared__ float vals[kRows];
  const std::int64_t slot = blockIdx.x;
  const SlotInfo s = slot_info(a, slot);
  const ExpertSet& set = s.shared ? a.shared : a.routed;
  const std::int64_t i0 = std::int64_t(blockIdx.y) * kRows;
  if (!s.valid || i0 >= set.inter) return;
  stage1_rows<F>(a, s, i0, red, vals);
  if (threadIdx.x == 0)
    for (int r = 0; r < kRows && i0 + r < set.inter; ++r) a.mid[slot * mid_stride + i0 + r] = vals[r];
}

template <int F>
__global__ void __launch_bounds__(kThreads) stage2_kernel(FusedMoeArgs a, std::int64_t mid_stride) {
  __shared__ float red[kRows * kThreads];
  const std::int64_t slot = blockIdx.x;
  const SlotInfo s = slot_info(a, slot);
  const std::int64_t h0 = std::int64_t(blockIdx.y) * kRows;
  if (!s.valid || h0 >= a.hidden) return;
  stage2_rows<F>(a, s, slot, h0, a.mid + slot * mid_stride, red);
}

template <int F>
__global__ void __launch_bounds__(kThreads) one_stage_kernel(FusedMoeArgs a) {
  __shared__ float red[2 * kRows * kThreads];
  __shared__ float z[kOneStageMaxInter];
  const std::int64_t slot = blockIdx.x;
  const SlotInfo s = slot_info(a, slot);
  if (!s.valid) return;
  const ExpertSet& set = s.shared ? a.shared : a.routed;
  for (std::int64_t i0 = 0; i0 < set.inter; i0 += kRows) stage1_rows<F>(a, s, i0, red, z + i0);
  for (std::int64_t h0 = 0; h0 < a.hidden; h0 += kRows) {
    stage2_rows<F>(a, s, slot, h0, z, red);
    __syncthreads();
  }
}

// ---- Grouped path (two-stage, H and every inter a multiple of 8): slots sorted by expert, weights read once per
// pass over up to kTok tokens of that expert. A group of kLanes lanes owns one weight row (stage 1: one gate row and
// one up row; stage 2: one row of w2); each lane takes 8 consecutive columns per step and the group's partial sums
// meet in a shuffle butterfly (kLanes <= 32: right for 32- and 64-wide wavefronts).
constexpr int kLanes = 16;
constexpr int kGroups = kThreads / kLanes;  // weight rows per block
constexpr int kTok = 8;                     // tokens per pass over a row

// The expert set index of a slot: routed local expert g -> g; shared expert s -> local_experts + s.
__device__ inline std::int64_t set_index(const FusedMoeArgs& a, const SlotInfo& s) {
  return s.shared ? a.local_experts + s.expert : s.expert;
}

__global__ void count_slots_kernel(FusedMoeArgs a) {
  const std::int64_t slots = a.tokens * (a.topk + a.n_shared);
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < slots; i += std::int64_t(gridDim.x) * blockDim.x) {
    const SlotInfo s = slot_info(a, i);
    if (s.valid) atomicAdd(&a.expert_counts[set_index(a, s)], 1);
  }
}

// Exclusive prefix sum of the counts, and the scatter cursors. The counts go through shared memory: a serial loop
// over global memory would wait one L2 round trip per set (stores may alias the next load), ~0.1 ms at 256 sets.
constexpr int kScanThreads = 256;
__global__ void __launch_bounds__(kScanThreads) scan_slots_kernel(FusedMoeArgs a, int sets) {
  __shared__ std::int32_t part[kScanThreads];
  __shared__ std::int32_t carry;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (int base = 0; base < sets; base += kScanThreads) {
    const int e = base + int(threadIdx.x);
    part[threadIdx.x] = e < sets ? a.expert_counts[e] : 0;
    __syncthreads();
    if (threadIdx.x == 0) {
      std::int32_t off = carry;
      for (int j = 0; j < kScanThreads; ++j) {
        const std::int32_t c = part[j];
        part[j] = off;
        off += c;
      }
      carry = off;
    }
    __syncthreads();
    if (e < sets) a.expert_offsets[e] = a.expert_cursor[e] = part[threadIdx.x];
    __syncthreads();
  }
  if (threadIdx.x == 0) a.expert_offsets[sets] = carry;
}

// Each valid slot's place in its expert's segment. The order inside a segment is the atomics' (it varies); no
// result depends on it: every slot's sums run over the same lanes in the same order whichever pass holds it.
__global__ void scatter_slots_kernel(FusedMoeArgs a) {
  const std::int64_t slots = a.tokens * (a.topk + a.n_shared);
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < slots; i += std::int64_t(gridDim.x) * blockDim.x) {
    const SlotInfo s = slot_info(a, i);
    if (s.valid) a.sorted_slots[atomicAdd(&a.expert_cursor[set_index(a, s)], 1)] = std::int32_t(i);
  }
}

// Eight stage-1 input elements [c, c + 8) of a slot (see input_at).
__device__ inline void input8(const FusedMoeArgs& a, const SlotInfo& s, std::int64_t c, float (&x)[8]) {
  if (a.xq_routed) {
    const float* p = s.shared ? a.xq_shared + s.token * a.hidden + c
                              : a.xq_routed + (a.weight_on_input ? s.slot : s.token) * a.hidden + c;
    const float4 v0 = *reinterpret_cast<const float4*>(p), v1 = *reinterpret_cast<const float4*>(p + 4);
    x[0] = v0.x; x[1] = v0.y; x[2] = v0.z; x[3] = v0.w; x[4] = v1.x; x[5] = v1.y; x[6] = v1.z; x[7] = v1.w;
    return;
  }
  if (a.in_type == ElemType::f32) {
    for (int q = 0; q < 8; ++q) x[q] = load(a.x, s.token * a.hidden + c + q, ElemType::f32);
  } else {
    load8(a.x, s.token * a.hidden + c, a.in_type, x);
  }
  if (a.weight_on_input && !s.shared)
    for (int q = 0; q < 8; ++q) x[q] = round_to(x[q] * s.weight, a.in_type);
}

__device__ inline void load8f(const float* p, float (&z)[8]) {
  const float4 v0 = *reinterpret_cast<const float4*>(p), v1 = *reinterpret_cast<const float4*>(p + 4);
  z[0] = v0.x; z[1] = v0.y; z[2] = v0.z; z[3] = v0.w; z[4] = v1.x; z[5] = v1.y; z[6] = v1.z; z[7] = v1.w;
}

template <int N>
__device__ inline void group_sum(float (&v)[N]) {
#pragma unroll
  for (int m = 0; m < N; ++m)
    for (int off = kLanes / 2; off > 0; off >>= 1) v[m] += MOE_SHFL_XOR(v[m], off, kLanes);
}

template <int F>
__device__ void grouped_stage1_body(const FusedMoeArgs& a, const ExpertSet& set, std::int64_t e, std::int64_t begin,
                                    std::int64_t end, std::int64_t mid_stride, SlotInfo* sinfo) {
  const int lane = int(threadIdx.x) % kLanes;
  const std::int64_t inter = set.inter, h = a.hidden;
  const std::int64_t i = std::int64_t(blockIdx.x) * kGroups + int(threadIdx.x) / kLanes;
  const bool row_ok = i < inter;  // every lane still takes part in the shuffles
  std::int64_t rg, ru;
  gate_up_rows(a, inter, row_ok ? i : inter - 1, rg, ru);
  for (std::int64_t t0 = begin; t0 < end; t0 += kTok) {
    const int n = int(end - t0 < kTok ? end - t0 : kTok);
    if (int(threadIdx.x) < n) sinfo[threadIdx.x] = slot_info(a, a.sorted_slots[t0 + threadIdx.x]);
    __syncthreads();
    float ag[kTok], au[kTok];
#pragma unroll
    for (int m = 0; m < kTok; ++m) ag[m] = au[m] = 0.0f;
    for (std::int64_t c = std::int64_t(lane) * 8; c < h; c += kLanes * 8) {
      float wg[8], wu[8];
      load8w<F>(set, true, e, rg, c, 2 * inter, h, wg);
      load8w<F>(set, true, e, ru, c, 2 * inter, h, wu);
#pragma unroll
      for (int m = 0; m < kTok; ++m) {
        if (m < n) {  // a guard, not a break: the loop must unroll for ag/au to stay in registers
          float x[8];
          input8(a, sinfo[m], c, x);
#pragma unroll
          for (int q = 0; q < 8; ++q) {
            ag[m] = accumulate(a, ag[m], x[q], wg[q]);
            au[m] = accumulate(a, au[m], x[q], wu[q]);
          }
        }
      }
    }
    group_sum(ag);
    group_sum(au);
    if (lane == 0 && row_ok) {
      bool clamp = set.clamp;
      if (MOE_MUT(a, swiglu_clamp_dropped)) clamp = false;
#pragma unroll
      for (int m = 0; m < kTok; ++m) {
        if (m >= n) continue;
        float g = ag[m], u = au[m];
        if (set.b13 && !MOE_MUT(a, biases_dropped)) {
          g += set.b13[e * 2 * inter + rg];
          u += set.b13[e * 2 * inter + ru];
        }
        const bool cl = clamp || (MOE_MUT(a, shared_clamp_when_disabled) && sinfo[m].shared);
        a.mid[sinfo[m].slot * mid_stride + i] = round_to(activate(g, u, a, cl), a.mid_type);
      }
    }
    __syncthreads();  // sinfo is refilled by the next pass
  }
}

template <int F>
__device__ void grouped_stage2_body(const FusedMoeArgs& a, const ExpertSet& set, std::int64_t e, std::int64_t begin,
                                    std::int64_t end, std::int64_t mid_stride, SlotInfo* sinfo) {
  const int lane = int(threadIdx.x) % kLanes;
  const std::int64_t inter = set.inter, h = a.hidden;
  const std::int64_t r = std::int64_t(blockIdx.x) * kGroups + int(threadIdx.x) / kLanes;
  const bool row_ok = r < h;
  const std::int64_t row = row_ok ? r : h - 1;
  const int per = a.topk + a.n_shared;
  for (std::int64_t t0 = begin; t0 < end; t0 += kTok) {
    const int n = int(end - t0 < kTok ? end - t0 : kTok);
    if (int(threadIdx.x) < n) sinfo[threadIdx.x] = slot_info(a, a.sorted_slots[t0 + threadIdx.x]);
    __syncthreads();
    float acc[kTok];
#pragma unroll
    for (int m = 0; m < kTok; ++m) acc[m] = 0.0f;
    for (std::int64_t c = std::int64_t(lane) * 8; c < inter; c += kLanes * 8) {
      float w[8];
      load8w<F>(set, false, e, row, c, h, inter, w);
#pragma unroll
      for (int m = 0; m < kTok; ++m) {
        if (m < n) {
          float z[8];
          load8f(a.mid + sinfo[m].slot * mid_stride + c, z);
#pragma unroll
          for (int q = 0; q < 8; ++q) acc[m] = accumulate(a, acc[m], z[q], w[q]);
        }
      }
    }
    group_sum(acc);
    if (lane == 0 && row_ok) {
#pragma unroll
      for (int m = 0; m < kTok; ++m) {
        if (m >= n) continue;
        const SlotInfo& s = sinfo[m];
        float y = acc[m];
        if (set.b2 && !MOE_MUT(a, biases_dropped)) y += set.b2[e * h + row];
        y *= (a.weight_on_input && !s.shared) ? 1.0f : s.weight;
        if (MOE_MUT(a, lost_atomic_update) && a.reduce == ReduceKind::fused_atomic && s.token == 0 && s.slot % per == 1)
          continue;  // see stage2_rows
        if (a.reduce == ReduceKind::fused_atomic) atomicAdd(&a.acc[s.token * h + row], y);
        else a.slots[s.slot * h + row] = y;
      }
    }
    __syncthreads();
  }
}

// Grid: (row tiles of kGroups rows, expert sets). Blocks of sets without slots, or past the set's rows, exit.
template <int F, int Stage>
__global__ void __launch_bounds__(kThreads) grouped_stage_kernel(FusedMoeArgs a, std::int64_t mid_stride) {
  __shared__ SlotInfo sinfo[kTok];
  const std::int64_t set_idx = blockIdx.y;
  const bool shared = set_idx >= a.local_experts;
  const ExpertSet& set = shared ? a.shared : a.routed;
  const std::int64_t e = shared ? set_idx - a.local_experts : set_idx;
  const std::int64_t rows = Stage == 1 ? set.inter : a.hidden;
  if (std::int64_t(blockIdx.x) * kGroups >= rows) return;
  const std::int64_t begin = a.expert_offsets[set_idx], end = a.expert_offsets[set_idx + 1];
  if (begin == end) return;
  const bool generic = F >= 0 && shared && a.shared.wfmt != WFormat(F);  // a shared set in another format
  if (Stage == 1) {
    if (generic) grouped_stage1_body<-1>(a, set, e, begin, end, mid_stride, sinfo);
    else grouped_stage1_body<F>(a, set, e, begin, end, mid_stride, sinfo);
  } else {
    if (generic) grouped_stage2_body<-1>(a, set, e, begin, end, mid_stride, sinfo);
    else grouped_stage2_body<F>(a, set, e, begin, end, mid_stride, sinfo);
  }
}

// Stage-1 inputs as fp32 rows before quantization: x per token for each set, or, with the router weight on the
// input, x * w rounded to the input dtype per routed slot (what the model feeds the expert).
__global__ void prepare_inputs_kernel(FusedMoeArgs a) {
  const std::int64_t rows = a.weight_on_input ? a.tokens * (a.topk + a.n_shared) : a.tokens;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * a.hidden; i += stride) {
    if (a.weight_on_input) {
      const SlotInfo s = slot_info(a, i / a.hidden);
      const float x = load(a.x, s.token * a.hidden + i % a.hidden, a.in_type);
      a.xq_routed[i] = s.shared ? x : round_to(x * s.weight, a.in_type);
    } else {
      a.xq_routed[i] = load(a.x, i, a.in_type);
    }
  }
  if (a.xq_shared)
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.tokens * a.hidden; i += stride)
      a.xq_shared[i] = load(a.x, i, a.in_type);
}

// Fake-quantizes rows [n, k] (row stride `stride`) per group: the whole row (per token), 128 columns, or 32 (MX).
// With per > 0 only the rows whose slot belongs to the wanted set (shared: slot % per >= topk) are touched.
__global__ void quantize_rows_kernel(float* rows, std::int64_t n, std::int64_t k, std::int64_t stride, ActQuant q,
                                     int per, int topk, bool want_shared, float forced_scale) {
  const std::int64_t group = q.kind == AQuant::fp8_token ? k : q.kind == AQuant::fp8_group128 ? 128 : 32;
  const std::int64_t groups = (k + group - 1) / group;
  for (std::int64_t g = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; g < n * groups;
       g += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = g / groups, c0 = (g % groups) * group;
    if (per > 0 && ((r % per) >= topk) != want_shared) continue;
    fake_quantize_group(rows + r * stride + c0, min(group, k - c0), q, forced_scale);
  }
}

// out[t, :] = acc[t, :] (fused_atomic) or the k-ordered sum of the slots that hold a local expert (separate).
__global__ void finalize_kernel(FusedMoeArgs a) {
  const std::int64_t n = a.tokens * a.hidden;
  const int per = a.topk + a.n_shared;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
    if (MOE_MUT(a, last_token_unwritten) && i / a.hidden == a.tokens - 1) continue;
    float v;
    if (a.reduce == ReduceKind::fused_atomic) {
      v = a.acc[i];
    } else {
      const std::int64_t t = i / a.hidden, c = i % a.hidden;
      v = 0.0f;
      for (int j = 0; j < per; ++j) {
        const SlotInfo s = slot_info(a, t * per + j);
        if (s.valid) v += a.slots[(t * per + j) * a.hidden + c];
      }
    }
    store(a.out, i, v, a.out_type);
  }
}

// Calls fn(std::integral_constant<int, F>) for the routed experts' weight format: one instantiation per format.
template <class Fn>
void dispatch_format(WFormat f, Fn&& fn) {
  switch (f) {
    case WFormat::bf16: fn(std::integral_constant<int, int(WFormat::bf16)>{}); return;
    case WFormat::f16: fn(std::integral_constant<int, int(WFormat::f16)>{}); return;
    case WFormat::fp8_tensor: fn(std::integral_constant<int, int(WFormat::fp8_tensor)>{}); return;
    case WFormat::fp8_channel: fn(std::integral_constant<int, int(WFormat::fp8_channel)>{}); return;
    case WFormat::fp8_block: fn(std::integral_constant<int, int(WFormat::fp8_block)>{}); return;
    case WFormat::mxfp8: fn(std::integral_constant<int, int(WFormat::mxfp8)>{}); return;
    case WFormat::mxfp4: fn(std::integral_constant<int, int(WFormat::mxfp4)>{}); return;
  }
  throw_harness_error("launch_fused_moe", "unknown weight format");
}

}  // namespace

void MOE_LAUNCH_FUSED_MOE(const FusedMoeArgs& args) {
#ifdef MOE_GPU_MUTANTS
  FusedMoeArgs a = args;  // the expert sets see the bug too (weight decoding)
  a.routed.mutation = a.shared.mutation = a.mutation;
  a.routed.mut_expert = a.mutation == int(Mutation::e8m0_scale_off_by_one) ? a.mut_expert : -1;
  a.shared.mut_expert = a.routed.mut_expert;
#else
  const FusedMoeArgs& a = args;
#endif
  const std::int64_t slots = a.tokens * (a.topk + a.n_shared);
  const std::int64_t max_inter = a.routed.inter > a.shared.inter ? a.routed.inter : a.shared.inter;
  if (slots == 0) return;
  if (a.fail_launch_for_test) {
    // 4096 threads per block exceeds every vendor's limit: the launch itself fails.
    one_stage_kernel<0><<<dim3(1), dim3(4096)>>>(a);
    MOE_GPU_CHECK_LAUNCH("one_stage_kernel (test hook: invalid launch)");
  }
  const bool quant = quantizes_activations(a);
  if (quant && a.one_stage)
    throw_harness_error("launch_fused_moe", "quantized activations need the two-stage path (the adapter picks it)");
  const int per = a.topk + a.n_shared;
  auto quantize = [&](float* rows, std::int64_t n, std::int64_t k, std::int64_t stride, const ActQuant& q, int p,
                      bool shared, const char* what, float forced_scale = 0.0f) {
    if (q.kind == AQuant::none || n == 0 || k == 0) return;
    quantize_rows_kernel<<<dim3(1024), dim3(128)>>>(rows, n, k, stride, q, p, a.topk, shared, forced_scale);
    MOE_GPU_CHECK_LAUNCH(what);
  };
  if (quant) {
    prepare_inputs_kernel<<<dim3(1024), dim3(256)>>>(a);
    MOE_GPU_CHECK_LAUNCH("prepare_inputs_kernel");
    const float forced = MOE_MUT(a, per_tensor_act_scale) && a.routed.aq.kind == AQuant::fp8_token ? a.mut_tensor_scale : 0.0f;
    if (a.weight_on_input) quantize(a.xq_routed, slots, a.hidden, a.hidden, a.routed.aq, per, false, "quantize_rows_kernel (x, routed slots)", forced);
    else quantize(a.xq_routed, a.tokens, a.hidden, a.hidden, a.routed.aq, 0, false, "quantize_rows_kernel (x, routed)", forced);
    if (a.n_shared > 0) quantize(a.xq_shared, a.tokens, a.hidden, a.hidden, a.shared.aq, 0, false, "quantize_rows_kernel (x, shared)");
  }
  if (a.one_stage) {
    if (max_inter > kOneStageMaxInter)
      throw_harness_error("launch_fused_moe", "one-stage kernel called with inter above its shared-memory limit");
    dispatch_format(a.routed.wfmt, [&](auto f) {
      one_stage_kernel<decltype(f)::value><<<dim3(unsigned(slots)), dim3(kThreads)>>>(a);
    });
    MOE_GPU_CHECK_LAUNCH("one_stage_kernel");
  } else {
    const bool grouped = grouped_path(a);
    const int sets = int(a.local_experts + a.n_shared);
    if (grouped) {
      if (!a.expert_counts || !a.expert_offsets || !a.expert_cursor || !a.sorted_slots)
        throw_harness_error("launch_fused_moe", "the grouped path needs the sort buffers");
      MOE_GPU_CHECK(hipMemsetAsync(a.expert_counts, 0, sizeof(std::int32_t) * std::size_t(sets), 0));
      count_slots_kernel<<<dim3(unsigned((slots + 255) / 256 < 1024 ? (slots + 255) / 256 : 1024)), dim3(256)>>>(a);
      MOE_GPU_CHECK_LAUNCH("count_slots_kernel");
      scan_slots_kernel<<<dim3(1), dim3(kScanThreads)>>>(a, sets);
      MOE_GPU_CHECK_LAUNCH("scan_slots_kernel");
      scatter_slots_kernel<<<dim3(unsigned((slots + 255) / 256 < 1024 ? (slots + 255) / 256 : 1024)), dim3(256)>>>(a);
      MOE_GPU_CHECK_LAUNCH("scatter_slots_kernel");
      dispatch_format(a.routed.wfmt, [&](auto f) {
        grouped_stage_kernel<decltype(f)::value, 1>
            <<<dim3(unsigned((max_inter + kGroups - 1) / kGroups), unsigned(sets)), dim3(kThreads)>>>(a, max_inter);
      });
      MOE_GPU_CHECK_LAUNCH("grouped_stage_kernel (stage 1)");
    } else {
      dispatch_format(a.routed.wfmt, [&](auto f) {
        stage1_kernel<decltype(f)::value><<<dim3(unsigned(slots), unsigned((max_inter + kRows - 1) / kRows)), dim3(kThreads)>>>(a, max_inter);
      });
      MOE_GPU_CHECK_LAUNCH("stage1_kernel");
    }
    if (quant) {  // the intermediate, already rounded to its dtype, quantized per slot row as each set declares
      quantize(a.mid, slots, a.routed.inter, max_inter, a.routed.aq, per, false, "quantize_rows_kernel (intermediate, routed)");
      if (a.n_shared > 0)
        quantize(a.mid, slots, a.shared.inter, max_inter, a.shared.aq, per, true, "quantize_rows_kernel (intermediate, shared)");
    }
    if (grouped) {
      dispatch_format(a.routed.wfmt, [&](auto f) {
        grouped_stage_kernel<decltype(f)::value, 2>
            <<<dim3(unsigned((a.hidden + kGroups - 1) / kGroups), unsigned(sets)), dim3(kThreads)>>>(a, max_inter);
      });
      MOE_GPU_CHECK_LAUNCH("grouped_stage_kernel (stage 2)");
    } else {
      dispatch_format(a.routed.wfmt, [&](auto f) {
        stage2_kernel<decltype(f)::value><<<dim3(unsigned(slots), unsigned((a.hidden + kRows - 1) / kRows)), dim3(kThreads)>>>(a, max_inter);
      });
      MOE_GPU_CHECK_LAUNCH("stage2_kernel");
    }
  }
  if (a.reduce != ReduceKind::per_k) {
    finalize_kernel<<<dim3(1024), dim3(256)>>>(a);
    MOE_GPU_CHECK_LAUNCH("finalize_kernel");
  }
}

}  // namespace moe::gpu
