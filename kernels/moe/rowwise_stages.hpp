// The row-wise kernels: one block per (slot, tile of kRows rows), each slot reading its expert's weights itself, and
// the one-stage kernel (one block per slot, the intermediate in shared memory). Block sums through shared memory.
// Device code of the fused MoE kernels: included by kernels/moe/fused_moe.hip only, inside one translation unit
// (internal linkage; the mutant build, kernels/mutants/fused_moe_mutants.hip, compiles its own copy).
#pragma once
#include <cstdint>
#include "kernels/moe/slot_ops.hpp"

namespace moe::gpu {
namespace {

constexpr int kRows = 8;

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
  if (F >= 0 && s.shared && a.shared.wfmt != WeightFormat(F)) {
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
      dst[r] = stage1_output(a, s, rg[r], ru[r], part[2 * r], part[2 * r + 1]);
    }
  }
  __syncthreads();
}

// Down projection of kRows hidden outputs [h0, h0 + kRows) of one slot from its intermediate `z`, then reduce.
template <int F>
__device__ void stage2_rows(const FusedMoeArgs& a, const SlotInfo& s, std::int64_t h0,
                            const float* z, float* red) {
  const ExpertSet& set = s.shared ? a.shared : a.routed;
  if (F >= 0 && s.shared && a.shared.wfmt != WeightFormat(F)) {
    stage2_rows<-1>(a, s, h0, z, red);
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
  if (threadIdx.x == 0)
    for (int r = 0; r < kRows && h0 + r < h; ++r) stage2_output(a, s, h0 + r, part[r]);
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
  stage2_rows<F>(a, s, h0, a.mid + slot * mid_stride, red);
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
    stage2_rows<F>(a, s, h0, z, red);
    __syncthreads();
  }
}

}  // namespace
}  // namespace moe::gpu
