// The grouped kernels: slots sorted by expert set on the device, each weight row read once per pass over up to
// KT (2 or 8) of its expert's tokens.
// Device code of the fused MoE kernels: included by kernels/moe/fused_moe.hip only, inside one translation unit
// (internal linkage; the mutant build, kernels/mutants/fused_moe_mutants.hip, compiles its own copy).
#pragma once
#include <cstdint>
#include <type_traits>

#include "kernels/moe/slot_ops.hpp"
#include "kernels/moe/static_for.hpp"

namespace moe::gpu {
namespace {

// ---- Grouped path (two-stage, H and every inter a multiple of the chunk width): slots sorted by expert, weights
// read once per pass over up to KT tokens of that expert. A group of kLanes lanes owns one weight row (stage 1: one
// gate row and one up row; stage 2: one row of w2); each lane takes one 16-byte chunk of consecutive columns per
// step and the group's partial sums meet in a shuffle butterfly (kLanes <= 32: right for 32- and 64-wide
// wavefronts).
constexpr int kLanes = 16;
constexpr int kGroups = kThreads / kLanes;  // weight rows per block
// Tokens per pass over a row: KT, a kernel template argument, kTokMany or kTokFew (LaunchPlan::tokens_per_pass,
// kernels/gpu/dispatch_plan.cpp: a decode batch has one or two tokens per expert, and eight accumulators per row would cost
// registers, hence occupancy, for nothing: 1.4x to 1.7x on the bf16 and fp8 decode shapes, measured on the H200:
// results/runs/2026-11-30-h200-decode/RUN.md).
constexpr int kTokMany = 8, kTokFew = 2;
// Chunks each lane fetches before decoding any (loads in flight) in the few-token kernels, which wait on memory:
// stage 1 reads two rows (gate and up) per group. The many-token kernels do KT times the arithmetic per chunk and
// fetch one at a time (unrolling them further only multiplies their code and compile time).
template <int KT> constexpr int ahead1() { return KT == kTokFew ? 2 : 1; }
template <int KT> constexpr int ahead2() { return KT == kTokFew ? 4 : 1; }

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

// Exclusive prefix sum of the counts, the scatter cursors, and the list of sets that hold slots (the stage
// kernels' grid runs over that list: a decode batch touches a few dozen of 257 sets). The counts go through shared
// memory: a serial loop over global memory would wait one L2 round trip per set (stores may alias the next load).
constexpr int kScanThreads = 256;
__global__ void __launch_bounds__(kScanThreads) scan_slots_kernel(FusedMoeArgs a, int sets) {
  __shared__ std::int32_t part[kScanThreads];
  __shared__ std::int32_t carry, active;
  if (threadIdx.x == 0) carry = active = 0;
  __syncthreads();
  for (int base = 0; base < sets; base += kScanThreads) {
    const int e = base + int(threadIdx.x);
    part[threadIdx.x] = e < sets ? a.expert_counts[e] : 0;
    __syncthreads();
    if (threadIdx.x == 0) {
      std::int32_t off = carry, n = active;
      for (int j = 0; j < kScanThreads; ++j) {
        const std::int32_t c = part[j];
        if (c > 0) a.active_sets[n++] = base + j;
        part[j] = off;
        off += c;
      }
      carry = off;
      active = n;
    }
    __syncthreads();
    if (e < sets) a.expert_offsets[e] = a.expert_cursor[e] = part[threadIdx.x];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    a.expert_offsets[sets] = carry;
    a.active_sets[sets] = active;
  }
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
    load8f(p, x);
    return;
  }
  if (a.in_type == DType::f32) {
    for (int q = 0; q < 8; ++q) x[q] = load(a.x, s.token * a.hidden + c + q, DType::f32);
  } else {
    load8(a.x, s.token * a.hidden + c, a.in_type, x);
  }
  if (a.weight_on_input && !s.shared)
    for (int q = 0; q < 8; ++q) x[q] = weigh_input(a, s, x[q]);
}

template <int N>
__device__ inline void group_sum(float (&v)[N]) {
#pragma unroll
  for (int m = 0; m < N; ++m)
    for (int off = kLanes / 2; off > 0; off >>= 1) v[m] += MOE_SHFL_XOR(v[m], off, kLanes);
}

// The weight row a lane's group owns in the block's row tile, clamped into [0, rows): a group past the last row
// still loads and takes part in the shuffles (row_ok false: it writes nothing).
struct GroupRow {
  int lane;
  bool row_ok;
  std::int64_t row;
};
__device__ inline GroupRow group_row(std::int64_t rows) {
  const std::int64_t r = std::int64_t(blockIdx.x) * kGroups + int(threadIdx.x) / kLanes;
  return {int(threadIdx.x) % kLanes, r < rows, r < rows ? r : rows - 1};
}

// One pass's slots (up to KT tokens of the expert from t0) into shared memory for the whole block; how many.
template <int KT>
__device__ inline int load_pass(const FusedMoeArgs& a, std::int64_t t0, std::int64_t end, SlotInfo* sinfo) {
  const int n = int(end - t0 < KT ? end - t0 : KT);
  if (int(threadIdx.x) < n) sinfo[threadIdx.x] = slot_info(a, a.sorted_slots[t0 + threadIdx.x]);
  __syncthreads();
  return n;
}

// Stage 1 for one row tile of one expert set: lane `lane` of a group takes chunks of V columns (one 16-byte weight
// load each, chunk_width) at c = lane * V + j * kLanes * V, ahead1 chunks fetched before any is decoded, then
// decoded 8 columns at a time. Each token's sum runs over the columns in increasing c whatever the fetch grouping.
template <int F, int V, int KT>
__device__ void grouped_stage1_body(const FusedMoeArgs& a, const ExpertSet& set, std::int64_t e, std::int64_t begin,
                                    std::int64_t end, std::int64_t mid_stride, SlotInfo* sinfo) {
  const std::int64_t inter = set.inter, h = a.hidden;
  const GroupRow g = group_row(inter);
  const bool fast = chunked<F>(set);
  constexpr int kAhead1 = ahead1<KT>();
  std::int64_t rg, ru;
  gate_up_rows(a, inter, g.row, rg, ru);
  for (std::int64_t t0 = begin; t0 < end; t0 += KT) {
    const int n = load_pass<KT>(a, t0, end, sinfo);
    float ag[KT], au[KT];
#pragma unroll
    for (int m = 0; m < KT; ++m) ag[m] = au[m] = 0.0f;
    for (std::int64_t c0 = std::int64_t(g.lane) * V; c0 < h; c0 += kAhead1 * kLanes * V) {
      RawChunk rawg[kAhead1], rawu[kAhead1];
      if constexpr (F >= 0) {
        static_for<kAhead1>([&](auto uc) {
          constexpr int u = decltype(uc)::value;
          const std::int64_t c = c0 + std::int64_t(u) * kLanes * V;
          if (fast && c < h) {
            rawg[u] = fetch_chunk<F>(set, true, e, rg, c, 2 * inter, h);
            rawu[u] = fetch_chunk<F>(set, true, e, ru, c, 2 * inter, h);
          }
        });
      }
      static_for<kAhead1>([&](auto uc) {
        constexpr int u = decltype(uc)::value;
        const std::int64_t c = c0 + std::int64_t(u) * kLanes * V;
        if (c < h) {  // guards, not breaks: the loops must unroll for the arrays to stay in registers
          static_for<V / 8>([&](auto jc) {  // piece by piece: 8 gate and 8 up weights live at a time
            constexpr int j = decltype(jc)::value;
            float wg[8], wu[8];
            if constexpr (F >= 0) {
              if (fast) {
                decode_piece<F, j>(set, rawg[u], wg);
                decode_piece<F, j>(set, rawu[u], wu);
              }
            }
            if (!fast) {
              load8w<F>(set, true, e, rg, c + 8 * j, 2 * inter, h, wg);
              load8w<F>(set, true, e, ru, c + 8 * j, 2 * inter, h, wu);
            }
            static_for<KT>([&](auto mc) {
              constexpr int m = decltype(mc)::value;
              if (m < n) {
                float x[8];
                input8(a, sinfo[m], c + 8 * j, x);
#pragma unroll
                for (int q = 0; q < 8; ++q) {
                  ag[m] = accumulate(a, ag[m], x[q], wg[q]);
                  au[m] = accumulate(a, au[m], x[q], wu[q]);
                }
              }
            });
          });
        }
      });
    }
    group_sum(ag);
    group_sum(au);
    if (g.lane == 0 && g.row_ok) {
#pragma unroll
      for (int m = 0; m < KT; ++m)
        if (m < n) a.mid[sinfo[m].slot * mid_stride + g.row] = stage1_output(a, sinfo[m], rg, ru, ag[m], au[m]);
    }
    __syncthreads();  // sinfo is refilled by the next pass
  }
}

template <int F, int V, int KT>
__device__ void grouped_stage2_body(const FusedMoeArgs& a, const ExpertSet& set, std::int64_t e, std::int64_t begin,
                                    std::int64_t end, std::int64_t mid_stride, SlotInfo* sinfo) {
  const std::int64_t inter = set.inter, h = a.hidden;
  const GroupRow g = group_row(h);
  const std::int64_t row = g.row;
  const bool fast = chunked<F>(set);
  constexpr int kAhead2 = ahead2<KT>();
  for (std::int64_t t0 = begin; t0 < end; t0 += KT) {
    const int n = load_pass<KT>(a, t0, end, sinfo);
    float acc[KT];
#pragma unroll
    for (int m = 0; m < KT; ++m) acc[m] = 0.0f;
    for (std::int64_t c0 = std::int64_t(g.lane) * V; c0 < inter; c0 += kAhead2 * kLanes * V) {
      RawChunk raw[kAhead2];
      if constexpr (F >= 0) {
#pragma unroll
        for (int u = 0; u < kAhead2; ++u) {
          const std::int64_t c = c0 + std::int64_t(u) * kLanes * V;
          if (fast && c < inter) raw[u] = fetch_chunk<F>(set, false, e, row, c, h, inter);
        }
      }
#pragma unroll
      for (int u = 0; u < kAhead2; ++u) {
        const std::int64_t c = c0 + std::int64_t(u) * kLanes * V;
        if (c < inter) {
          float w[V];
          if constexpr (F >= 0) {
            if (fast) decode_chunk<F>(set, raw[u], w);
          }
          if (!fast) load_by_8<F, V>(set, false, e, row, c, h, inter, w);
#pragma unroll
          for (int m = 0; m < KT; ++m) {
            if (m < n) {
#pragma unroll
              for (int j = 0; j < V / 8; ++j) {
                float z[8];
                load8f(a.mid + sinfo[m].slot * mid_stride + c + 8 * j, z);
#pragma unroll
                for (int q = 0; q < 8; ++q) acc[m] = accumulate(a, acc[m], z[q], w[8 * j + q]);
              }
            }
          }
        }
      }
    }
    group_sum(acc);
    if (g.lane == 0 && g.row_ok) {
#pragma unroll
      for (int m = 0; m < KT; ++m)
        if (m < n) stage2_output(a, sinfo[m], row, acc[m]);
    }
    __syncthreads();
  }
}

// Grid: (row tiles of kGroups rows, at most min(sets, slots) entries of the active-set list). Blocks past the list's
// length or past their set's rows exit, and so do those of a shared set whose format is not F: the launcher runs
// those through grouped_other_format_kernel. V: the routed format's chunk width (the plan checked the shapes);
// KT: tokens per pass.
template <int F, int V, int KT, int Stage>
__global__ void __launch_bounds__(kThreads) grouped_stage_kernel(FusedMoeArgs a, std::int64_t mid_stride, int sets) {
  __shared__ SlotInfo sinfo[KT];
  if (int(blockIdx.y) >= a.active_sets[sets]) return;
  const std::int64_t set_idx = a.active_sets[blockIdx.y];
  const bool shared = set_idx >= a.local_experts;
  if (shared && a.shared.wfmt != WeightFormat(F)) return;
  const ExpertSet& set = shared ? a.shared : a.routed;
  const std::int64_t e = shared ? set_idx - a.local_experts : set_idx;
  const std::int64_t rows = Stage == 1 ? set.inter : a.hidden;
  if (std::int64_t(blockIdx.x) * kGroups >= rows) return;
  const std::int64_t begin = a.expert_offsets[set_idx], end = a.expert_offsets[set_idx + 1];
  if (Stage == 1) grouped_stage1_body<F, V, KT>(a, set, e, begin, end, mid_stride, sinfo);
  else grouped_stage2_body<F, V, KT>(a, set, e, begin, end, mid_stride, sinfo);
}

// The shared sets when their format differs from the routed experts' (an fp8 shared expert beside MX routed
// experts): the format read at run time, 8 columns per step (every grouped row length is a multiple of 8). A launch
// of its own, so the routed kernels carry none of this code (inlined into each of them it doubled the build; called
// out of line it put the arguments on every thread's stack). Grid: (row tiles, n_shared).
template <int KT, int Stage>
__global__ void __launch_bounds__(kThreads) grouped_other_format_kernel(FusedMoeArgs a, std::int64_t mid_stride) {
  __shared__ SlotInfo sinfo[KT];
  const std::int64_t set_idx = a.local_experts + blockIdx.y;
  const std::int64_t rows = Stage == 1 ? a.shared.inter : a.hidden;
  if (std::int64_t(blockIdx.x) * kGroups >= rows) return;
  const std::int64_t begin = a.expert_offsets[set_idx], end = a.expert_offsets[set_idx + 1];
  if (Stage == 1) grouped_stage1_body<-1, 8, KT>(a, a.shared, blockIdx.y, begin, end, mid_stride, sinfo);
  else grouped_stage2_body<-1, 8, KT>(a, a.shared, blockIdx.y, begin, end, mid_stride, sinfo);
}

}  // namespace
}  // namespace moe::gpu
