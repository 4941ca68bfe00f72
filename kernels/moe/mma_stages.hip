// The grouped path's many-token stages on matrix instructions (StagePath::grouped_mma; kernels/gpu/dispatch_plan.cpp says when): per listed
// expert set, a tiled GEMM over its sorted slots. A block computes a tile of 64 slots x 128 weight rows with 8 warps
// (2 along the slots x 4 along the rows, 32 x 32 each, 16x16x16 fragments: bf16 or fp16 operands, fp32
// accumulators); k-tiles of 32 columns go through shared memory, double buffered, the next one read into registers
// while the current one is multiplied. The tile then goes through shared memory to the same per-element epilogues
// as the other kernels (stage1_output, stage2_output in slot_ops.hpp): biases, activation, rounding, router weight
// and reduce mode are theirs.
//  stage 1: the 128 rows are the gate rows then the up rows of 64 intermediate indices (any stored layout), so a
//           thread finds both sums of an index in the tile; A is the slot's token row of x (times the router weight,
//           rounded to the input dtype, when the weight goes on the input).
//  stage 2: 128 rows of w2; A is the slot's stage-1 row, already rounded to the intermediate dtype (= the weight
//           type, so the conversion to the operand type is exact).
// NVIDIA only (wmma): on AMD grouped_mma_built() is false and the launcher never calls this.
#include "kernels/moe/mma_stages.hpp"

#include "kernels/runtime/gpu_check.hpp"
#include "kernels/runtime/hip_compat.hpp"

#if defined(__HIP__) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)

namespace moe::gpu {
bool grouped_mma_built() { return false; }
void launch_grouped_mma(const FusedMoeArgs&, int, std::int64_t, int, unsigned) {
  throw_harness_error("launch_grouped_mma", "no matrix-instruction kernels in an AMD build (grouped_mma_built)");
}
}  // namespace moe::gpu

#else

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include "kernels/moe/slot_ops.hpp"

namespace moe::gpu {
namespace {

constexpr int kBM = 64;               // slots per tile
constexpr int kBN = 128;              // weight rows per tile
constexpr int kBK = 32;               // columns per k-tile
constexpr int kLdAB = kBK + 8;        // shared row stride in elements (80 bytes: ldmatrix rows hit distinct banks)
constexpr int kLdC = kBN + 4;         // fp32 tile row stride
constexpr int kMmaThreads = 256;      // 8 warps of 32 (NVIDIA only)

struct TileBuffers {
  std::uint16_t a[2][kBM][kLdAB];
  std::uint16_t b[2][kBN][kLdAB];
};
union MmaShared {  // the fp32 tile reuses the operand buffers once the k loop is done
  TileBuffers ab;
  float c[kBM][kLdC];
};

template <bool Bf16> struct Operand;
template <> struct Operand<true> { using type = __nv_bfloat16; };
template <> struct Operand<false> { using type = __half; };

template <bool Bf16>
__device__ inline std::uint32_t pack2(float lo, float hi) {
  const std::uint32_t l = Bf16 ? to_bf16(lo) : to_f16(lo), h = Bf16 ? to_bf16(hi) : to_f16(hi);
  return l | (h << 16);
}

template <bool Bf16>
__device__ inline uint4 pack8(const float (&v)[8]) {
  return make_uint4(pack2<Bf16>(v[0], v[1]), pack2<Bf16>(v[2], v[3]), pack2<Bf16>(v[4], v[5]), pack2<Bf16>(v[6], v[7]));
}

// Eight operand elements [k, k + 8) of tile row m (a slot, or zeros past the segment's end).
template <bool Bf16, int Stage>
__device__ inline uint4 a_chunk(const FusedMoeArgs& a, const SlotInfo& s, bool ok, std::int64_t k,
                                std::int64_t mid_stride) {
  if (!ok) return make_uint4(0u, 0u, 0u, 0u);
  if (Stage == 2) {
    float v[8];
    load8f(a.mid + s.slot * mid_stride + k, v);
    return pack8<Bf16>(v);  // exact: mid holds values rounded to this type
  }
  const std::int64_t i = s.token * a.hidden + k;
  if (!a.weight_on_input || s.shared) return *reinterpret_cast<const uint4*>(static_cast<const std::uint16_t*>(a.x) + i);
  float v[8];
  load8(a.x, i, a.in_type, v);
#pragma unroll
  for (int q = 0; q < 8; ++q) v[q] = weigh_input(a, s, v[q]);
  return pack8<Bf16>(v);  // exact: rounded to the input type, which is this type
}

// Grid: (tiles of output columns: 64 intermediate indices in stage 1, 128 hidden rows in stage 2; the listed sets;
// z slices of each set's slot tiles, tile t taken by slice t mod gridDim.z).
template <bool Bf16, int Stage>
__global__ void __launch_bounds__(kMmaThreads) grouped_mma_kernel(FusedMoeArgs a, std::int64_t mid_stride, int sets) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  namespace wmma = nvcuda::wmma;
  using T = typename Operand<Bf16>::type;
  __shared__ __align__(128) unsigned char raw[sizeof(MmaShared)];
  __shared__ SlotInfo sinfo[kBM];
  MmaShared& sm = *reinterpret_cast<MmaShared*>(raw);

  if (int(blockIdx.y) >= a.active_sets[sets]) return;
  const std::int64_t set_idx = a.active_sets[blockIdx.y];
  const bool shared = set_idx >= a.local_experts;
  const ExpertSet& set = shared ? a.shared : a.routed;
  const std::int64_t e = shared ? set_idx - a.local_experts : set_idx;
  const std::int64_t inter = set.inter, h = a.hidden;
  constexpr int kCols = Stage == 1 ? kBN / 2 : kBN;  // output columns per tile
  const std::int64_t n_out = Stage == 1 ? inter : h;
  const std::int64_t n0 = std::int64_t(blockIdx.x) * kCols;
  if (n0 >= n_out) return;
  const std::int64_t K = Stage == 1 ? h : inter;
  const std::int64_t w_rows = Stage == 1 ? 2 * inter : h;
  const std::uint16_t* w = static_cast<const std::uint16_t*>(Stage == 1 ? set.w13 : set.w2) + e * w_rows * K;
  const std::int64_t begin = a.expert_offsets[set_idx], end = a.expert_offsets[set_idx + 1];

  const int tid = int(threadIdx.x), warp = tid / 32;
  const int wm = warp / 4, wn = warp % 4;  // this warp's 32 x 32 sub-tile
  // Loads: thread tid fills A row tid / 4 and B rows tid / 4 and 64 + tid / 4, columns (tid % 4) * 8 .. + 8.
  const int lr = tid / 4, lc = (tid % 4) * 8;
  const std::uint16_t* brow[2];
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const int r = lr + 64 * j;
    std::int64_t wr = -1;
    if (Stage == 1) {
      const std::int64_t idx = n0 + (r % 64);
      if (idx < inter) {
        std::int64_t rg, ru;
        gate_up_rows(a, inter, idx, rg, ru);
        wr = r < 64 ? rg : ru;
      }
    } else if (n0 + r < h) {
      wr = n0 + r;
    }
    brow[j] = wr >= 0 ? w + wr * K + lc : nullptr;
  }
  const int nk = int(K / kBK);

  for (std::int64_t t0 = begin + std::int64_t(blockIdx.z) * kBM; t0 < end; t0 += std::int64_t(gridDim.z) * kBM) {
    const int n = int(end - t0 < kBM ? end - t0 : kBM);
    if (tid < n) sinfo[tid] = slot_info(a, a.sorted_slots[t0 + tid]);
    __syncthreads();
    const bool a_ok = lr < n;
    const SlotInfo s = sinfo[a_ok ? lr : 0];

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    uint4 ra = a_chunk<Bf16, Stage>(a, s, a_ok, lc, mid_stride);
    uint4 rb[2];
#pragma unroll
    for (int j = 0; j < 2; ++j) rb[j] = brow[j] ? *reinterpret_cast<const uint4*>(brow[j]) : make_uint4(0u, 0u, 0u, 0u);
    *reinterpret_cast<uint4*>(&sm.ab.a[0][lr][lc]) = ra;
#pragma unroll
    for (int j = 0; j < 2; ++j) *reinterpret_cast<uint4*>(&sm.ab.b[0][lr + 64 * j][lc]) = rb[j];
    __syncthreads();

    for (int kt = 0; kt < nk; ++kt) {
      const int cur = kt & 1;
      const bool more = kt + 1 < nk;
      if (more) {  // the next k-tile into registers while this one is multiplied
        const std::int64_t k = std::int64_t(kt + 1) * kBK;
        ra = a_chunk<Bf16, Stage>(a, s, a_ok, k + lc, mid_stride);
#pragma unroll
        for (int j = 0; j < 2; ++j) rb[j] = brow[j] ? *reinterpret_cast<const uint4*>(brow[j] + k) : make_uint4(0u, 0u, 0u, 0u);
      }
#pragma unroll
      for (int kk = 0; kk < kBK; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa[2];
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb[2];
#pragma unroll
        for (int i = 0; i < 2; ++i)
          wmma::load_matrix_sync(fa[i], reinterpret_cast<const T*>(&sm.ab.a[cur][wm * 32 + i * 16][kk]), kLdAB);
#pragma unroll
        for (int j = 0; j < 2; ++j)
          wmma::load_matrix_sync(fb[j], reinterpret_cast<const T*>(&sm.ab.b[cur][wn * 32 + j * 16][kk]), kLdAB);
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
      }
      if (more) {  // the other buffer: every warp finished reading it before the last barrier
        *reinterpret_cast<uint4*>(&sm.ab.a[cur ^ 1][lr][lc]) = ra;
#pragma unroll
        for (int j = 0; j < 2; ++j) *reinterpret_cast<uint4*>(&sm.ab.b[cur ^ 1][lr + 64 * j][lc]) = rb[j];
      }
      __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j)
        wmma::store_matrix_sync(&sm.c[wm * 32 + i * 16][wn * 32 + j * 16], acc[i][j], kLdC, wmma::mem_row_major);
    __syncthreads();

    if (Stage == 1) {
      for (int idx = tid; idx < kBM * kCols; idx += kMmaThreads) {
        const int m = idx / kCols, c = idx % kCols;
        const std::int64_t i = n0 + c;
        if (m < n && i < inter) {
          std::int64_t rg, ru;
          gate_up_rows(a, inter, i, rg, ru);
          a.mid[sinfo[m].slot * mid_stride + i] = stage1_output(a, sinfo[m], rg, ru, sm.c[m][c], sm.c[m][kCols + c]);
        }
      }
    } else {
      for (int idx = tid; idx < kBM * kCols; idx += kMmaThreads) {
        const int m = idx / kCols, c = idx % kCols;
        if (m < n && n0 + c < h) stage2_output(a, sinfo[m], n0 + c, sm.c[m][c]);
      }
    }
    __syncthreads();  // sinfo and the shared tile are refilled by the next slot tile
  }
#endif
}

}  // namespace

bool grouped_mma_built() { return true; }

void launch_grouped_mma(const FusedMoeArgs& a, int stage, std::int64_t mid_stride, int sets, unsigned grid_sets) {
  const std::int64_t slots = a.tokens * (a.topk + a.n_shared);
  const std::int64_t max_inter = a.routed.inter > a.shared.inter ? a.routed.inter : a.shared.inter;
  // Slot-tile slices per set: enough for the mean set (plus one for the busier ones); a slice with no tile exits.
  const std::int64_t mean_tiles = (slots / std::int64_t(grid_sets) + kBM - 1) / kBM;
  const unsigned z = unsigned(mean_tiles + 1 < 32 ? mean_tiles + 1 : 32);
  const bool bf16 = a.routed.wfmt == WeightFormat::bf16;
  if (stage == 1) {
    const dim3 grid(unsigned((max_inter + kBN / 2 - 1) / (kBN / 2)), grid_sets, z);
    if (bf16) grouped_mma_kernel<true, 1><<<grid, dim3(kMmaThreads), 0, MOE_LAUNCH_STREAM>>>(a, mid_stride, sets);
    else grouped_mma_kernel<false, 1><<<grid, dim3(kMmaThreads), 0, MOE_LAUNCH_STREAM>>>(a, mid_stride, sets);
    MOE_GPU_CHECK_LAUNCH("grouped_mma_kernel (stage 1)");
  } else {
    const dim3 grid(unsigned((a.hidden + kBN - 1) / kBN), grid_sets, z);
    if (bf16) grouped_mma_kernel<true, 2><<<grid, dim3(kMmaThreads), 0, MOE_LAUNCH_STREAM>>>(a, mid_stride, sets);
    else grouped_mma_kernel<false, 2><<<grid, dim3(kMmaThreads), 0, MOE_LAUNCH_STREAM>>>(a, mid_stride, sets);
    MOE_GPU_CHECK_LAUNCH("grouped_mma_kernel (stage 2)");
  }
}

}  // namespace moe::gpu

#endif
