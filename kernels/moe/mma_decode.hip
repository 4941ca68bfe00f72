// The grouped path's few-token stages for quantized weights (fp8 per tensor / channel / 128x128 block, MXFP8,
// MXFP4) on matrix instructions; decode_mma_path in fused_moe.hpp says when. A decode batch brings one to four
// tokens to each expert, so the other kernels spend their time decoding weights and waiting on memory with few
// warps; here one mma.sync m16n8k16 (bf16 operands, fp32 accumulators) takes 16 weight rows x 16 columns against
// all the pass's tokens at once, and each warp streams its rows with the next two steps of 128 columns in flight.
//
// Operands. A = 16 weight rows: stage 1, the gate rows (A rows 0..7) and the up rows (8..15) of 8 intermediate
// indices, so a lane ends with both sums of one index; stage 2, 16 rows of w2. Each lane owns one row pair (g, g+8)
// and 32 columns of every 128 (MXFP4: 32 consecutive, an MX block, one 16-byte copy per row; fp8 / MXFP8: two runs
// of 16, 64 apart, each inside its own MX block, so that a quad's copies cover whole sectors; chunk_col), all inside
// one fp8 128-column block. A sum does not depend on which k position of the instruction a column takes, so a lane's
// columns are laid out in the order its copies deliver them (pairs (k, k+4) of every 8), and B is stored in that
// same order. Weights are decoded exactly (decode_piece, the decoder the other kernels use) and
// rounded to bf16, which holds every e2m1 and e4m3 value times a power of two exactly: MX scales are folded in (exact
// for e2m1; for e4m3 while the product stays above 2^-133, i.e. for every scale code from 3 up), fp8 scales are not:
// the 128 columns' partial sums are multiplied by the row's scale, then added (per tensor and per channel alike).
// MXFP4 takes a shorter road to the same bits where the scale code allows (e2m1_pair_placed below).
// B = 8 columns: 4 tokens x (hi, lo), x = hi + lo with hi = bf16(x), lo = bf16(x - hi): |x - hi - lo| <= 2^-17 |x|,
// and exact where x has at most 16 significant bits (bf16 inputs and intermediates: lo = 0).
//
// The inputs are rewritten in place into that operand layout first (split_rows_kernel): every 8 fp32 values become
// the 4 hi pairs then the 4 lo pairs, in the same 32 bytes. Stage 1 reads xq_routed / xq_shared (the launcher fills
// them), stage 2 mid. Epilogues: stage1_output / stage2_output (slot_ops.hpp), as every other kernel.
// NVIDIA only (mma.sync): on AMD decode_mma_built() is false and the launcher never calls this.
#include "kernels/moe/mma_decode.hpp"

#include "kernels/runtime/gpu_check.hpp"
#include "kernels/runtime/hip_compat.hpp"

#if defined(__HIP__) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)

namespace moe::gpu {
bool decode_mma_built() { return false; }
void launch_decode_mma(const FusedMoeArgs&, int, std::int64_t, int, unsigned) {
  throw_harness_error("launch_decode_mma", "no matrix-instruction decode kernels in an AMD build (decode_mma_built)");
}
}  // namespace moe::gpu

#else

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
template <int F> constexpr int dec_tiles() { return WFormat(F) == WFormat::mxfp4 ? 2 : 1; }
template <int F> constexpr int dec_chunks() { return 32 / chunk_width(WFormat(F)); }  // 16-byte loads per row
template <int F> constexpr bool dec_mx() { return WFormat(F) == WFormat::mxfp8 || WFormat(F) == WFormat::mxfp4; }

// The weights and B of a step travel through a ring of kStages stages in shared memory, one ring per warp, by
// cp.async, 16 bytes at a time (the weights past L1, which they would only flush; B through L1, where the other warps
// of the SM find the same tokens): kStages - 1 steps are in flight while one is multiplied, and each lane reads back
// only the bytes it copied itself, so no barrier is needed. A stage holds 8 chunks of 16 bytes per lane, chunk-major
// ([chunk][lane]: the 16-byte reads hit distinct banks): 4 of weights ([tile][row g / g + 8][chunk of the row]), 4 of
// B (the lane's 4 pieces of 8 columns, its half `part`). Out-of-range bytes (past K, or a B column whose token is not
// in the pass) are zeros filled by the copy itself. The scales (a byte or a float per row and step, through L1) are
// fetched one step ahead into registers. One step prefetched into registers instead (a 2-deep pipeline) left the warps
// waiting on memory (ncu: long scoreboard 4.9 of 8.7 cycles per instruction; measured on the H200:
// reports/runs/2026-12-01-h200-decode-ring/RUN.md).
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
  constexpr int V = chunk_width(WFormat(F));
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
// reports/runs/2026-12-01-h200-decode-scales/RUN.md). fp8 per tensor and per channel scales do not change along a row:
// loaded once (row_scale).
template <int F> constexpr bool dec_step_scales() { return dec_mx<F>() || WFormat(F) == WFormat::fp8_block; }
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
        } else if constexpr (WFormat(F) == WFormat::fp8_block) {
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
  constexpr WFormat f = WFormat(F);
  constexpr int kPieces = chunk_width(f) / 8;
  const int tig = lane % 4;
#pragma unroll
  for (int r = 0; r < dec_tiles<F>(); ++r)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int j = 0; j < dec_chunks<F>(); ++j) {
        const int c = chunk_col<F>(c0, tig, j);
        const int i = c < K ? c : 0;
        cp_async16<false>(stage + ((r * 2 + h) * dec_chunks<F>() + j) * 32 + lane, wrow[r][h] + (f == WFormat::mxfp4 ? i / 2 : i), c < K);
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

// Grid: (groups of kDecWarps * dec_tiles row tiles, the listed sets). A row tile is 8 intermediate indices (stage 1)
// or 16 hidden rows (stage 2). No block-wide barrier: warps past the rows exit.
template <int F, int Stage>
__global__ void __launch_bounds__(kDecThreads, 4) decode_mma_kernel(FusedMoeArgs a, std::int64_t mid_stride, int sets) {
  constexpr int R = dec_tiles<F>();
  constexpr bool mx = dec_mx<F>();
  static_assert(dec_wchunks<F>() == 4, "a ring stage holds 4 weight chunks per lane");
  extern __shared__ uint4 ring_all[];
  if (int(blockIdx.y) >= a.active_sets[sets]) return;
  const std::int64_t set_idx = a.active_sets[blockIdx.y];
  const bool shared = set_idx >= a.local_experts;
  const ExpertSet& set = shared ? a.shared : a.routed;
  const std::int64_t e = shared ? set_idx - a.local_experts : set_idx;
  const std::int64_t inter = set.inter, h = a.hidden;
  constexpr int kOut = Stage == 1 ? 8 : 16;  // outputs per row tile
  const std::int64_t n_out = Stage == 1 ? inter : h;
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32, g = lane / 4, tig = lane % 4;
  const std::int64_t tile0 = (std::int64_t(blockIdx.x) * kDecWarps + warp) * R;
  if (tile0 * kOut >= n_out) return;
  const std::int64_t K = Stage == 1 ? h : inter, rows = Stage == 1 ? 2 * inter : h;
  uint4* ring = ring_all + std::size_t(warp) * kStages * kStageChunks * 32;

  // This lane's A rows (g and g + 8) of tile r, clamped to real rows: stage 1, the gate and up rows of intermediate
  // index (tile0 + r) 8 + g; stage 2, hidden rows (tile0 + r) 16 + g and + 8. Recomputed by the epilogue rather
  // than kept live through the loop.
  auto a_rows = [&](int r, std::int64_t (&rw)[2]) {
    const std::int64_t i = (tile0 + r) * kOut + g;
    if (Stage == 1) {
      gate_up_rows(a, inter, i < inter ? i : inter - 1, rw[0], rw[1]);
    } else {
      rw[0] = i < h ? i : h - 1;
      rw[1] = i + 8 < h ? i + 8 : h - 1;
    }
  };
  // Each row's weights and scales, located once.
  // (Scales as 32-bit offsets within the expert's: an expert matrix holds far fewer than 2^32 of them.)
  const std::uint8_t* wrow[R][2];
  std::uint32_t soff[R][2];
  float row_scale[R][2];  // fp8 per tensor / per channel
  const std::uint8_t* w = static_cast<const std::uint8_t*>(Stage == 1 ? set.w13 : set.w2);
  auto scale_row = [&](std::int64_t rw) -> const void* {
    if constexpr (mx) return mx_scale_row(set, Stage == 1, e, rw, rows, K);
    else return fp8_scale_row(set, WFormat(F), Stage == 1, e, rw, rows, K);
  };
  const void* sbase = scale_row(0);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    std::int64_t rw[2];
    a_rows(r, rw);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const std::int64_t first = (e * rows + rw[hh]) * K;
      wrow[r][hh] = w + (WFormat(F) == WFormat::mxfp4 ? first / 2 : first);
      const void* sr = scale_row(rw[hh]);
      soff[r][hh] = std::uint32_t(mx ? static_cast<const std::uint8_t*>(sr) - static_cast<const std::uint8_t*>(sbase)
                                     : static_cast<const float*>(sr) - static_cast<const float*>(sbase));
      if constexpr (dec_step_scales<F>()) row_scale[r][hh] = 1.0f;  // unused: the step's scales
      else row_scale[r][hh] = *static_cast<const float*>(sr);
    }
  }
  const bool triton = set.e8m0_triton;

  const std::int64_t begin = a.expert_offsets[set_idx], end = a.expert_offsets[set_idx + 1];
  const int mb = g / 2, part = g % 2;  // the token and the half of x this lane's B column holds
  const int Kc = int(K);  // columns as int: a row is far shorter than 2^31
  const int steps = (Kc + kGroupCols - 1) / kGroupCols;
  for (std::int64_t t0 = begin; t0 < end; t0 += kDecTokens) {
    const int n = int(end - t0 < kDecTokens ? end - t0 : kDecTokens);
    const SlotInfo sb = slot_info(a, a.sorted_slots[t0 + (mb < n ? mb : n - 1)]);
    const bool b_on = mb < n;
    const float* brow = Stage == 2 ? a.mid + sb.slot * mid_stride
                        : sb.shared ? a.xq_shared + sb.token * h
                                    : a.xq_routed + (a.weight_on_input ? sb.slot : sb.token) * h;
    float acc[R][4];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[r][q] = 0.0f;

    // Every lane commits one group per step (an empty one past the last), so wait_group<kStages - 1> after the
    // commit of step i + kStages - 1 means step i has landed. A step's scales are loaded before the copies of the
    // step two ahead, not after them: measured, not derived (ncu per-instruction samples of MXFP4 stage 1 on the H200,
    // reports/runs/2026-12-01-h200-decode-scales/RUN.md): issued after those copies, a scale's first use held 33% of
    // the kernel's stall samples; issued before, 17%, and the kernel ran 248 -> 227 us.
    StepScales<F> cur = fetch_scales<F>(sbase, soff, 0, tig, Kc);
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < steps) issue_step<F>(ring + s * kStageChunks * 32, lane, wrow, s * kGroupCols, Kc, brow, part, b_on);
      else cp_async_commit();
    }
    int slot = 0;
    for (int step = 0; step < steps; ++step) {
      const int c0 = step * kGroupCols;
      StepScales<F> nxt;
      if (step + 1 < steps) nxt = fetch_scales<F>(sbase, soff, c0 + kGroupCols, tig, Kc);
      {
        const int ahead = step + kStages - 1, ahead_slot = slot == 0 ? kStages - 1 : slot - 1;
        if (ahead < steps)
          issue_step<F>(ring + ahead_slot * kStageChunks * 32, lane, wrow, ahead * kGroupCols, Kc, brow, part, b_on);
        else
          cp_async_commit();
      }
      cp_async_wait<kStages - 1>();
      // This step's scales, decoded from what the previous step fetched.
      float sc[R][2][dec_scales<F>()];
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
#pragma unroll
          for (int j = 0; j < dec_scales<F>(); ++j) {
            if constexpr (mx) sc[r][hh][j] = chunk_col<F>(c0, tig, j) < Kc ? e8m0_decode(cur.raw[r][hh][j], triton) : 1.0f;
            else if constexpr (dec_step_scales<F>()) sc[r][hh][j] = __uint_as_float(cur.raw[r][hh][j]);
            else sc[r][hh][j] = row_scale[r][hh];
          }
      const uint4* sw = ring + slot * kStageChunks * 32 + lane;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        uint4 wq[2][dec_chunks<F>()];  // tile r's rows g and g + 8
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
#pragma unroll
          for (int j = 0; j < dec_chunks<F>(); ++j) wq[hh][j] = sw[((r * 2 + hh) * dec_chunks<F>() + j) * 32];
        float part_sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // this step's sums (fp8: before the block scale)
        // Piece P's two instructions, given its bf16 pairs (k, k + 4), k = 0..3, of rows g and g + 8.
        auto mma_piece = [&](auto pc, const std::uint32_t (&pr)[2][4]) {
          constexpr int P = decltype(pc)::value;
          const uint4 bw = sw[(4 + P) * 32];  // B: piece P of this lane's 32 columns, the half `part`
          const std::uint32_t bp[4] = {bw.x, bw.y, bw.z, bw.w};
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const std::uint32_t av[4] = {pr[0][2 * hh], pr[1][2 * hh], pr[0][2 * hh + 1], pr[1][2 * hh + 1]};
            mma_bf16(part_sum, av, bp[2 * hh], bp[2 * hh + 1]);
          }
        };
        // The choice of decoder is made once per row tile and step, outside the pieces.
        if (WFormat(F) == WFormat::mxfp4 && e2m1_direct(sc[r][0][0]) && e2m1_direct(sc[r][1][0])) {
          std::uint32_t f[2];  // 2^126 * scale as a bf16 pair
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) f[hh] = std::uint32_t(__float_as_uint(sc[r][hh][0] * 0x1p126f) >> 16) * 0x10001u;
          static_for<4>([&](auto pc) {
            constexpr int P = decltype(pc)::value;
            std::uint32_t pr[2][4];
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
              const std::uint32_t q = chunk_word<P>(wq[hh][0]);
              pr[hh][0] = bf16x2_mul(e2m1_pair_placed<0>(q), f[hh]);
              pr[hh][1] = bf16x2_mul(e2m1_pair_placed<1>(q), f[hh]);
              pr[hh][2] = bf16x2_mul(e2m1_pair_placed<2>(q), f[hh]);
              pr[hh][3] = bf16x2_mul(e2m1_pair_placed<3>(q), f[hh]);
            }
            mma_piece(pc, pr);
          });
        } else {
          static_for<4>([&](auto pc) {
            constexpr int P = decltype(pc)::value;
            constexpr int kPieces = chunk_width(WFormat(F)) / 8;  // 8-column pieces per 16-byte chunk
            std::uint32_t pr[2][4];
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
              float w[8];
              decode_piece<F, P % kPieces>(set, RawChunk{wq[hh][P / kPieces], mx ? sc[r][hh][P / kPieces] : 1.0f}, w);
#pragma unroll
              for (int k = 0; k < 4; ++k) pr[hh][k] = bf16_pair(w[k], w[k + 4]);
            }
            mma_piece(pc, pr);
          });
        }
        if constexpr (mx) {
#pragma unroll
          for (int q = 0; q < 4; ++q) acc[r][q] += part_sum[q];
        } else {
          acc[r][0] += part_sum[0] * sc[r][0][0];
          acc[r][1] += part_sum[1] * sc[r][0][0];
          acc[r][2] += part_sum[2] * sc[r][1][0];
          acc[r][3] += part_sum[3] * sc[r][1][0];
        }
      }
      cur = nxt;
      slot = slot == kStages - 1 ? 0 : slot + 1;
    }
    cp_async_wait<0>();  // nothing of this pass is left in flight when the next pass refills the ring

    // C: this lane holds rows g and g + 8, columns 2 tig (hi) and 2 tig + 1 (lo): token tig of the pass.
    if (tig < n) {
      const SlotInfo so = slot_info(a, a.sorted_slots[t0 + tig]);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float v0 = acc[r][0] + acc[r][1], v1 = acc[r][2] + acc[r][3];
        const std::int64_t i = (tile0 + r) * kOut + g;  // stage 1: the intermediate index; 2: the first hidden row
        if (Stage == 1) {
          std::int64_t rw[2];
          a_rows(r, rw);
          if (i < inter) a.mid[so.slot * mid_stride + i] = stage1_output(a, so, rw[0], rw[1], v0, v1);
        } else {
          if (i < h) stage2_output(a, so, i, v0);
          if (i + 8 < h) stage2_output(a, so, i + 8, v1);
        }
      }
    }
  }
}

template <class Fn>
void dispatch_quantized(WFormat f, Fn&& fn) {
  switch (f) {
    case WFormat::fp8_tensor: fn(std::integral_constant<int, int(WFormat::fp8_tensor)>{}); return;
    case WFormat::fp8_channel: fn(std::integral_constant<int, int(WFormat::fp8_channel)>{}); return;
    case WFormat::fp8_block: fn(std::integral_constant<int, int(WFormat::fp8_block)>{}); return;
    case WFormat::mxfp8: fn(std::integral_constant<int, int(WFormat::mxfp8)>{}); return;
    case WFormat::mxfp4: fn(std::integral_constant<int, int(WFormat::mxfp4)>{}); return;
    default: break;
  }
  throw_harness_error("launch_decode_mma", "not a quantized weight format (decode_mma_path)");
}

void split_rows(float* v, std::int64_t values, const char* what) {
  if (!v || values == 0) return;
  const std::int64_t pieces = values / 8;
  const std::int64_t blocks = (pieces + 255) / 256;
  split_rows_kernel<<<dim3(unsigned(blocks < 1024 ? blocks : 1024)), dim3(256)>>>(v, pieces);
  MOE_GPU_CHECK_LAUNCH(what);
}

}  // namespace

bool decode_mma_built() { return true; }

void launch_decode_mma(const FusedMoeArgs& a, int stage, std::int64_t mid_stride, int sets, unsigned grid_sets) {
  const std::int64_t slots = a.tokens * (a.topk + a.n_shared);
  if (stage == 1) {  // the launcher checked that the prepared inputs exist
    split_rows(a.xq_routed, (a.weight_on_input ? slots : a.tokens) * a.hidden, "split_rows_kernel (stage-1 inputs)");
    if (a.n_shared > 0) split_rows(a.xq_shared, a.tokens * a.hidden, "split_rows_kernel (shared stage-1 inputs)");
  } else {
    split_rows(a.mid, slots * mid_stride, "split_rows_kernel (intermediate)");
  }
  const std::int64_t n_out = stage == 1 ? mid_stride : a.hidden;
  const int out_per_tile = stage == 1 ? 8 : 16;
  dispatch_quantized(a.routed.wfmt, [&](auto fc) {
    constexpr int F = decltype(fc)::value;
    const std::int64_t tiles = (n_out + out_per_tile - 1) / out_per_tile;
    const std::int64_t per_block = std::int64_t(kDecWarps) * dec_tiles<F>();
    const dim3 grid(unsigned((tiles + per_block - 1) / per_block), grid_sets);
    static_assert(kRingBytes <= 48 * 1024, "past 48 KiB of dynamic shared memory a kernel must opt in");
    if (stage == 1) decode_mma_kernel<F, 1><<<grid, dim3(kDecThreads), kRingBytes>>>(a, mid_stride, sets);
    else decode_mma_kernel<F, 2><<<grid, dim3(kDecThreads), kRingBytes>>>(a, mid_stride, sets);
  });
  MOE_GPU_CHECK_LAUNCH(stage == 1 ? "decode_mma_kernel (stage 1)" : "decode_mma_kernel (stage 2)");
}

}  // namespace moe::gpu

#endif
