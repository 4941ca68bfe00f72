// The grouped path's few-token stages for quantized weights (fp8 per tensor / channel / 128x128 block, MXFP8,
// MXFP4) on matrix instructions; kernels/gpu/dispatch_plan.cpp says when. A decode batch brings one to four
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

#include "kernels/moe/mma_decode_ring.hpp"

namespace moe::gpu {
namespace {

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
    else return fp8_scale_row(set, WeightFormat(F), Stage == 1, e, rw, rows, K);
  };
  const void* sbase = scale_row(0);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    std::int64_t rw[2];
    a_rows(r, rw);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const std::int64_t first = (e * rows + rw[hh]) * K;
      wrow[r][hh] = w + (WeightFormat(F) == WeightFormat::mxfp4 ? first / 2 : first);
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
    // results/runs/2026-12-01-h200-decode-scales/RUN.md): issued after those copies, a scale's first use held 33% of
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
        if (WeightFormat(F) == WeightFormat::mxfp4 && e2m1_direct(sc[r][0][0]) && e2m1_direct(sc[r][1][0])) {
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
            constexpr int kPieces = kChunkWidth<F> / 8;  // 8-column pieces per 16-byte chunk
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
void dispatch_quantized(WeightFormat f, Fn&& fn) {
  switch (f) {
    case WeightFormat::fp8_tensor: fn(std::integral_constant<int, int(WeightFormat::fp8_tensor)>{}); return;
    case WeightFormat::fp8_channel: fn(std::integral_constant<int, int(WeightFormat::fp8_channel)>{}); return;
    case WeightFormat::fp8_block: fn(std::integral_constant<int, int(WeightFormat::fp8_block)>{}); return;
    case WeightFormat::mxfp8: fn(std::integral_constant<int, int(WeightFormat::mxfp8)>{}); return;
    case WeightFormat::mxfp4: fn(std::integral_constant<int, int(WeightFormat::mxfp4)>{}); return;
    default: break;
  }
  throw_harness_error("launch_decode_mma", "not a quantized weight format (the plan picks this path for fp8 and MX weights only)");
}

void split_rows(float* v, std::int64_t values, const char* what) {
  if (!v || values == 0) return;
  const std::int64_t pieces = values / 8;
  const std::int64_t blocks = (pieces + 255) / 256;
  split_rows_kernel<<<dim3(unsigned(blocks < 1024 ? blocks : 1024)), dim3(256), 0, MOE_LAUNCH_STREAM>>>(v, pieces);
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
    if (stage == 1) decode_mma_kernel<F, 1><<<grid, dim3(kDecThreads), kRingBytes, MOE_LAUNCH_STREAM>>>(a, mid_stride, sets);
    else decode_mma_kernel<F, 2><<<grid, dim3(kDecThreads), kRingBytes, MOE_LAUNCH_STREAM>>>(a, mid_stride, sets);
  });
  MOE_GPU_CHECK_LAUNCH(stage == 1 ? "decode_mma_kernel (stage 1)" : "decode_mma_kernel (stage 2)");
}

}  // namespace moe::gpu

#endif
