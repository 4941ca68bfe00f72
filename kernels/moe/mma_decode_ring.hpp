// The decode mma kernels' device pieces (kernels/moe/mma_decode.hip, the only includer, inside its one translation
// unit): the operand layout (bf16 hi + lo pairs, split_rows_kernel), the mma.sync wrapper, the per-format tile
// sizes, the 3-deep cp.async ring each warp streams its weight rows and B through, and the scales fetched a step
// ahead. NVIDIA only (mma.sync, cp.async).
#pragma once
#include <cuda_bf16.h>

#include <type_traits>

#include "kernels/moe/slot_ops.hpp"
#include "kernels/moe/static_for.hpp"

namespace moe::gpu {
namespace {

constexpr int kDecWarps = 4;                  // warps per block (NVIDIA only: 32 lanes)
constexpr int kDecThreads = 32 * kDecWarps;
constexpr int kDecTokens = 4;                 // tokens per pass: B's 8 columns are (hi, lo) of each
constexpr int kGroupCols = 128;               // columns per step: 4 lanes x 32

__device__ inline std::uint32_t bf16_pair(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (lo) in the low 16 bits
  return *reinterpret_cast<const std::uint32_t*>(&v);
}

// Every 8 fp32 values [8i, 8i + 8) -> 16 bytes of (hi_k, hi_k+4) pairs, k = 0..3, then 16 bytes of the lo pairs.
__global__ void split_rows_kernel(float* v, std::int64_t pieces) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < pieces;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    float x[8];
    load8f(v + 8 * i, x);
    std::uint32_t hi[4], lo[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      hi[k] = bf16_pair(x[k], x[k + 4]);
      const float h0 = __uint_as_float(hi[k] << 16), h1 = __uint_as_float(hi[k] & 0xFFFF0000u);
      lo[k] = bf16_pair(x[k] - h0, x[k + 4] - h1);
    }
    uint4* p = reinterpret_cast<uint4*>(v + 8 * i);
    p[0] = make_uint4(hi[0], hi[1], hi[2], hi[3]);
    p[1] = make_uint4(lo[0], lo[1], lo[2], lo[3]);
  }
}

// MXFP4 straight to bf16 pairs: nibbles k and k + 4 of a word (elements k, k + 4) with their sign at bits 15 / 31
// and their three magnitude bits at 6..8 / 22..24 are the bf16 values e2m1 * 2^-126 (0.5 becomes the subnormal
// 2^-127); one bf16 multiplication by 2^126 * scale, a power of two, gives e2m1 * scale exactly. Used where the scale
// code is 2..128 (the factor 2^(code-1) is a normal bf16 and so is every nonzero product); else decode_piece.
template <int K>
__device__ inline std::uint32_t e2m1_pair_placed(std::uint32_t q) {
  constexpr int sh = 12 - 4 * K, mh = 6 - 4 * K;
  const std::uint32_t sign = (sh >= 0 ? q << sh : q >> -sh) & 0x80008000u;
  const std::uint32_t mag = (mh >= 0 ? q << mh : q >> -mh) & 0x01C001C0u;
  return sign | mag;
}
__device__ inline std::uint32_t bf16x2_mul(std::uint32_t a, std::uint32_t b) {
  const __nv_bfloat162 r = __hmul2(*reinterpret_cast<const __nv_bfloat162*>(&a), *reinterpret_cast<const __nv_bfloat162*>(&b));
  return *reinterpret_cast<const std::uint32_t*>(&r);
}
__device__ inline bool e2m1_direct(float s) { return s >= 0x1p-125f && s <= 2.0f; }  // false for NaN

__device__ inline void mma_bf16(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// Row tiles per warp: MXFP4 rows are short in bytes, two tiles share each B chunk.
template <int F> constexpr int dec_tiles() { return WeightFormat(F) == WeightFormat::mxfp4 ? 2 : 1; }
template <int F> constexpr int dec_chunks() { return 32 / kChunkWidth<F>; }  // 16-byte loads per row
template <int F> constexpr bool dec_mx() { return WeightFormat(F) == WeightFormat::mxfp8 || WeightFormat(F) == WeightFormat::mxfp4; }

// The weights and B of a step travel through a ring of kStages stages in shared memory, one ring per warp, by
// cp.async, 16 bytes at a time (the weights past L1, which they would only flush; B through L1, where the other warps
// of the SM find the same tokens): kStages - 1 steps are in flight while one is multiplied, and each lane reads back
// only the bytes it copied itself, so no barrier is needed. A stage holds 8 chunks of 16 bytes per lane, chunk-major
// ([chunk][lane]: the 16-byte reads hit distinct banks): 4 of weights ([tile][row g / g + 8][chunk of the row]), 4 of
// B (the lane's 4 pieces of 8 columns, its half `part`). Out-of-range bytes (past K, or a B column whose token is not
// in the pass) are zeros filled by the copy itself. The scales (a byte or a float per row and step, through L1) are
// fetched one step ahead into registers. One step prefetched into registers instead (a 2-deep pipeline) left the warps
// waiting on memory (ncu: long scoreboard 4.9 of 8.7 cycles per instruction; measured on the H200:
// results/runs/2026-12-01-h200-decode-ring/RUN.md).
constexpr int kStages = 3;
constexpr int kStageChunks = 8;
constexpr std::size_t kRingBytes = std::size_t(kDecWarps) * kStages * kStageChunks * 32 * sizeof(uint4);  // 48 KiB
template <int F> constexpr int dec_wchunks() { return dec_tiles<F>() * 2 * dec_chunks<F>(); }
template <int F> constexpr int dec_scales() { return dec_mx<F>() ? dec_chunks<F>() : 1; }  // per row and step

// The first column of chunk j of a lane's row in the step starting at c0: MXFP4, one 32-column chunk (an MX block);
// fp8 and MXFP8, two 16-column chunks 64 apart, so that each copy of a quad's 4 lanes covers 64 contiguous bytes of
// the row (whole 32-byte sectors). A piece P (8 columns) starts at chunk_col(P / pieces) + 8 (P % pieces).
template <int F>
__device__ inline int chunk_col(int c0, int tig, int j) {
  constexpr int V = kChunkWidth<F>;
  return c0 + V * tig + 4 * V * j;
}

// 16 bytes from global to shared memory, zeros where !on; L1: kept in L1 (.ca) or past it (.cg).
template <bool L1>
__device__ inline void cp_async16(uint4* dst, const void* src, bool on) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned d = unsigned(__cvta_generic_to_shared(dst));
  if constexpr (L1)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(on ? 16 : 0) : "memory");
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(on ? 16 : 0) : "memory");
#endif
}
__device__ inline void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N>
__device__ inline void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// A lane's scales for one step, as loaded: MX, the E8M0 codes of its blocks (folded into the decoded weights);
// fp8 128x128, the block scale's fp32 bits (applied to the partial sums). They are fetched a step ahead and decoded
// only when their step is multiplied, so that no instruction waits on them the moment they are asked for (decoded
// right after each load, they made a warp wait out four serial round trips a step; measured on the H200:
// results/runs/2026-12-01-h200-decode-scales/RUN.md). fp8 per tensor and per channel scales do not change along a row:
// loaded once (row_scale).
template <int F> constexpr bool dec_step_scales() { return dec_mx<F>() || WeightFormat(F) == WeightFormat::fp8_block; }
template <int F>
struct StepScales {
  std::uint32_t raw[dec_tiles<F>()][2][dec_scales<F>()];
};

// sbase: the expert's first scale row; soff: each of the lane's rows' scale row, as an offset in elements from it.
template <int F>
__device__ inline StepScales<F> fetch_scales(const void* sbase, const std::uint32_t (&soff)[dec_tiles<F>()][2], int c0,
                                             int tig, int K) {
  StepScales<F> st;
#pragma unroll
  for (int r = 0; r < dec_tiles<F>(); ++r)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < dec_scales<F>(); ++j) {
        if constexpr (dec_mx<F>()) {
          const int c = chunk_col<F>(c0, tig, j);
          st.raw[r][h][j] = static_cast<const std::uint8_t*>(sbase)[soff[r][h] + (c < K ? c : 0) / 32];
        } else if constexpr (WeightFormat(F) == WeightFormat::fp8_block) {
          st.raw[r][h][j] = __float_as_uint(static_cast<const float*>(sbase)[soff[r][h] + c0 / 128]);  // the sums span all 4 lanes
        } else {
          st.raw[r][h][j] = 0u;  // per tensor / per channel: row_scale
        }
      }
  return st;
}

// Copies a lane's weights and B of the step starting at column c0 into one ring stage and commits them as one group.
// wrow: the lane's weight rows (tile, g / g + 8); brow: its B row.
template <int F>
__device__ inline void issue_step(uint4* stage, int lane, const std::uint8_t* const (&wrow)[dec_tiles<F>()][2], int c0,
                                  int K, const float* brow, int part, bool b_on) {
  constexpr WeightFormat f = WeightFormat(F);
  constexpr int kPieces = kChunkWidth<F> / 8;
  const int tig = lane % 4;
#pragma unroll
  for (int r = 0; r < dec_tiles<F>(); ++r)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int j = 0; j < dec_chunks<F>(); ++j) {
        const int c = chunk_col<F>(c0, tig, j);
        const int i = c < K ? c : 0;
        cp_async16<false>(stage + ((r * 2 + h) * dec_chunks<F>() + j) * 32 + lane, wrow[r][h] + (f == WeightFormat::mxfp4 ? i / 2 : i), c < K);
      }
    }
#pragma unroll
  for (int P = 0; P < 4; ++P) {
    const int c = chunk_col<F>(c0, tig, P / kPieces) + 8 * (P % kPieces);
    const uint4* src = reinterpret_cast<const uint4*>(brow + (c < K ? c : 0)) + part;
    cp_async16<true>(stage + (4 + P) * 32 + lane, src, b_on && c < K);
  }
  cp_async_commit();
}

}  // namespace
}  // namespace moe::gpu
