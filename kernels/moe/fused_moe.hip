// BF16/FP16 fused MoE kernels. Written against the HIP runtime API (kernels/runtime/hip_compat.hpp maps it to CUDA on
// NVIDIA). No warp-size assumption anywhere: reductions go through shared memory with any block size.
//
// Work decomposition: a "slot" is one (token, routed k) or (token, shared expert) pair, slot = t * (k + S) + j.
//  two-stage: stage1 grid (slot, inter tile of kRows) computes kRows gate/up pairs per block -> activation ->
//             rounded to the intermediate dtype -> mid[slot, i]; stage2 grid (slot, hidden tile of kRows) computes
//             the down projection and reduces (atomic into acc, or per-slot rows).
//  one-stage: one block per slot does both stages with the intermediate in shared memory (decode token counts).
#include <cstdint>

#include "kernels/moe/fused_moe.hpp"
#include "kernels/runtime/gpu_check.hpp"
#include "kernels/runtime/hip_compat.hpp"

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
};

__device__ inline SlotInfo slot_info(const FusedMoeArgs& a, std::int64_t slot) {
  const int per = a.topk + a.n_shared;
  const std::int64_t t = slot / per;
  const int j = int(slot % per);
  if (j >= a.topk) return {true, true, t, std::int64_t(j - a.topk), 1.0f};
  const std::int64_t g = a.topk_ids[t * a.topk + j] - a.first_local_expert;
  return {g >= 0 && g < a.local_experts, false, t, g, a.topk_weights[t * a.topk + j]};
}

// Stage-1 row pair for intermediate index i in the stored layout.
__device__ inline void gate_up_rows(const FusedMoeArgs& a, std::int64_t inter, std::int64_t i, std::int64_t& g,
                                    std::int64_t& u) {
  if (a.layout == LayoutKind::gate_up) { g = i; u = inter + i; }
  else if (a.layout == LayoutKind::up_gate) { u = i; g = inter + i; }
  else { g = 2 * i; u = 2 * i + 1; }
}

// The stage-1 input element c of a slot's token (router weight on the input: x * w rounded to the input dtype).
__device__ inline float input_at(const FusedMoeArgs& a, const SlotInfo& s, std::int64_t c) {
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
__device__ void stage1_rows(const FusedMoeArgs& a, const SlotInfo& s, std::int64_t i0, float* red, float* dst) {
  const ExpertSet& set = s.shared ? a.shared : a.routed;
  const std::int64_t inter = set.inter, h = a.hidden;
  const std::int64_t base = s.expert * 2 * inter * h;
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
        load8(set.w13, base + rg[r] * h + c, a.w_type, w);
        for (int q = 0; q < 8; ++q) part[2 * r] += x[q] * w[q];
        load8(set.w13, base + ru[r] * h + c, a.w_type, w);
        for (int q = 0; q < 8; ++q) part[2 * r + 1] += x[q] * w[q];
      }
    }
  } else {
    for (std::int64_t c = threadIdx.x; c < h; c += kThreads) {
      const float x = input_at(a, s, c);
      for (int r = 0; r < kRows; ++r) {
        part[2 * r] += x * load(set.w13, base + rg[r] * h + c, a.w_type);
        part[2 * r + 1] += x * load(set.w13, base + ru[r] * h + c, a.w_type);
      }
    }
  }
  block_sum(part, red);
  if (threadIdx.x == 0) {
    for (int r = 0; r < kRows; ++r) {
      const std::int64_t i = i0 + r;
      if (i >= inter) break;
      float g = part[2 * r], u = part[2 * r + 1];
      if (set.b13) {
        g += set.b13[s.expert * 2 * inter + rg[r]];
        u += set.b13[s.expert * 2 * inter + ru[r]];
      }
      dst[r] = round_to(activate(g, u, a, set.clamp), a.mid_type);
    }
  }
  __syncthreads();
}

// Down projection of kRows hidden outputs [h0, h0 + kRows) of one slot from its intermediate `z`, then reduce.
__device__ void stage2_rows(const FusedMoeArgs& a, const SlotInfo& s, std::int64_t slot, std::int64_t h0,
                            const float* z, float* red) {
  const ExpertSet& set = s.shared ? a.shared : a.routed;
  const std::int64_t inter = set.inter, h = a.hidden;
  const std::int64_t base = s.expert * h * inter;
  float part[kRows];
  for (int r = 0; r < kRows; ++r) part[r] = 0.0f;
  std::int64_t rows[kRows];
  for (int r = 0; r < kRows; ++r) rows[r] = h0 + r < h ? h0 + r : h - 1;
  if (inter % 8 == 0) {
    for (std::int64_t i = std::int64_t(threadIdx.x) * 8; i < inter; i += std::int64_t(kThreads) * 8) {
      float w[8];
      for (int r = 0; r < kRows; ++r) {
        load8(set.w2, base + rows[r] * inter + i, a.w_type, w);
        for (int q = 0; q < 8; ++q) part[r] += z[i + q] * w[q];
      }
    }
  } else {
    for (std::int64_t i = threadIdx.x; i < inter; i += kThreads) {
      const float zi = z[i];
      for (int r = 0; r < kRows; ++r) part[r] += zi * load(set.w2, base + rows[r] * inter + i, a.w_type);
    }
  }
  block_sum(part, red);
  if (threadIdx.x == 0) {
    const float w = (a.weight_on_input && !s.shared) ? 1.0f : s.weight;
    for (int r = 0; r < kRows && h0 + r < h; ++r) {
      float y = part[r];
      if (set.b2) y += set.b2[s.expert * h + h0 + r];
      y *= w;
      if (a.reduce == ReduceKind::fused_atomic) atomicAdd(&a.acc[s.token * h + h0 + r], y);
      else a.slots[slot * h + h0 + r] = y;
    }
  }
}

__global__ void __launch_bounds__(kThreads) stage1_kernel(FusedMoeArgs a, std::int64_t mid_stride) {
  __shared__ float red[2 * kRows * kThreads];
  __shared__ float vals[kRows];
  const std::int64_t slot = blockIdx.x;
  const SlotInfo s = slot_info(a, slot);
  const ExpertSet& set = s.shared ? a.shared : a.routed;
  const std::int64_t i0 = std::int64_t(blockIdx.y) * kRows;
  if (!s.valid || i0 >= set.inter) return;
  stage1_rows(a, s, i0, red, vals);
  if (threadIdx.x == 0)
    for (int r = 0; r < kRows && i0 + r < set.inter; ++r) a.mid[slot * mid_stride + i0 + r] = vals[r];
}

__global__ void __launch_bounds__(kThreads) stage2_kernel(FusedMoeArgs a, std::int64_t mid_stride) {
  __shared__ float red[kRows * kThreads];
  const std::int64_t slot = blockIdx.x;
  const SlotInfo s = slot_info(a, slot);
  const std::int64_t h0 = std::int64_t(blockIdx.y) * kRows;
  if (!s.valid || h0 >= a.hidden) return;
  stage2_rows(a, s, slot, h0, a.mid + slot * mid_stride, red);
}

__global__ void __launch_bounds__(kThreads) one_stage_kernel(FusedMoeArgs a) {
  __shared__ float red[2 * kRows * kThreads];
  __shared__ float z[kOneStageMaxInter];
  const std::int64_t slot = blockIdx.x;
  const SlotInfo s = slot_info(a, slot);
  if (!s.valid) return;
  const ExpertSet& set = s.shared ? a.shared : a.routed;
  for (std::int64_t i0 = 0; i0 < set.inter; i0 += kRows) stage1_rows(a, s, i0, red, z + i0);
  for (std::int64_t h0 = 0; h0 < a.hidden; h0 += kRows) {
    stage2_rows(a, s, slot, h0, z, red);
    __syncthreads();
  }
}

// out[t, :] = acc[t, :] (fused_atomic) or the k-ordered sum of the slots that hold a local expert (separate).
__global__ void finalize_kernel(FusedMoeArgs a) {
  const std::int64_t n = a.tokens * a.hidden;
  const int per = a.topk + a.n_shared;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
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

}  // namespace

void launch_fused_moe(const FusedMoeArgs& a) {
  const std::int64_t slots = a.tokens * (a.topk + a.n_shared);
  const std::int64_t max_inter = a.routed.inter > a.shared.inter ? a.routed.inter : a.shared.inter;
  if (slots == 0) return;
  if (a.fail_launch_for_test) {
    // 4096 threads per block exceeds every vendor's limit: the launch itself fails.
    one_stage_kernel<<<dim3(1), dim3(4096)>>>(a);
    MOE_GPU_CHECK_LAUNCH("one_stage_kernel (test hook: invalid launch)");
  }
  if (a.one_stage) {
    if (max_inter > kOneStageMaxInter)
      throw_harness_error("launch_fused_moe", "one-stage kernel called with inter above its shared-memory limit");
    one_stage_kernel<<<dim3(unsigned(slots)), dim3(kThreads)>>>(a);
    MOE_GPU_CHECK_LAUNCH("one_stage_kernel");
  } else {
    stage1_kernel<<<dim3(unsigned(slots), unsigned((max_inter + kRows - 1) / kRows)), dim3(kThreads)>>>(a, max_inter);
    MOE_GPU_CHECK_LAUNCH("stage1_kernel");
    stage2_kernel<<<dim3(unsigned(slots), unsigned((a.hidden + kRows - 1) / kRows)), dim3(kThreads)>>>(a, max_inter);
    MOE_GPU_CHECK_LAUNCH("stage2_kernel");
  }
  if (a.reduce != ReduceKind::per_k) {
    finalize_kernel<<<dim3(1024), dim3(256)>>>(a);
    MOE_GPU_CHECK_LAUNCH("finalize_kernel");
  }
}

}  // namespace moe::gpu
