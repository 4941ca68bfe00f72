// The reference engine's expert GEMMs over stored (quantized) weights, shared by the contract reference
// (reference_moe.cpp) and the simulated envelope (ensemble.cpp): a job is one expert's rows, the weights are
// dequantized tile by tile (prefill) or row by row (decode) into fp32 or fp64 and multiplied with Eigen.
#pragma once
#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "reference/moe/act_quant.hpp"
#include "reference/moe/expert_dequant.hpp"
#include "reference/moe/large_buffer.hpp"

namespace moe::engine {

template <class S>
using RowMat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class S>
using MapMat = Eigen::Map<RowMat<S>>;

// One row of work for an expert: token t, its output slot, and the router weight where it applies.
struct Assignment {
  std::int64_t token;
  std::int64_t slot;  // row of the slot buffer [T * (k + n_shared), H]
  float weight;
};

struct ExpertJob {
  const ExpertWeights* weights;
  const QuantScheme* quant;
  std::int64_t index;  // expert slot within weights
  std::int64_t inter;
  bool shared;
  std::vector<Assignment> rows;
};

// Decode-sized problems stream the weight through a cache-sized tile (bandwidth-bound); larger ones dequantize the
// expert once and run one GEMM per stage (compute-bound).
constexpr std::int64_t kStreamRows = 16;

// A rounding point of fixtures/rounding_contract.hpp: f32 there means not rounded (the fp64 validation mode keeps
// its doubles), bf16 and f16 round.
template <class S>
void round_point(S* v, std::int64_t n, IntermediateDtype d) {
  if (d != IntermediateDtype::f32) round_to_dtype(v, n, d);
}

// out = a * W^T for the job's w13 or w2. row_sq: when given, receives each weight row's squared norm over K (the
// envelope's accumulation-noise scale), at the cost of one more pass over the decoded rows.
template <class S>
void gemm_with_dequant(const ExpertJob& job, WeightMatrix which, std::int64_t hidden, const MapMat<S>& a,
                       MapMat<S>& out, LargeVector<S>& wbuf, S* row_sq = nullptr) {
  const std::int64_t rows = which == WeightMatrix::w13 ? 2 * job.inter : hidden;
  const std::int64_t k = which == WeightMatrix::w13 ? hidden : job.inter;
  if (a.rows() > kStreamRows) {
    // Tiles of about 1 MiB of dequantized weight (L2-resident while Eigen packs them): along K for the wide stage-1
    // matrix (out += a[:, k-tile] * W[:, k-tile]^T), along the rows for stage 2 (out[:, row-tile] = a * W[tile]^T).
    const std::int64_t budget = (std::int64_t(1) << 20) / std::int64_t(sizeof(S));
    if (k > rows) {
      const std::int64_t kt = std::max<std::int64_t>(128, (budget / rows) / 128 * 128);
      wbuf.resize(static_cast<std::size_t>(rows * kt));
      for (std::int64_t k0 = 0; k0 < k; k0 += kt) {
        const std::int64_t k1 = std::min(k, k0 + kt);
        dequantize_rows(*job.weights, *job.quant, which, job.index, hidden, job.inter, 0, rows, wbuf.data(), k0, k1);
        MapMat<S> w(wbuf.data(), rows, k1 - k0);
        if (row_sq)
          for (std::int64_t r = 0; r < rows; ++r) row_sq[r] = (k0 == 0 ? S(0) : row_sq[r]) + w.row(r).squaredNorm();
        if (k0 == 0) out.noalias() = a.middleCols(0, k1) * w.transpose();
        else out.noalias() += a.middleCols(k0, k1 - k0) * w.transpose();
      }
    } else {
      const std::int64_t rt = std::max<std::int64_t>(16, budget / k);
      wbuf.resize(static_cast<std::size_t>(rt * k));
      for (std::int64_t r0 = 0; r0 < rows; r0 += rt) {
        const std::int64_t r1 = std::min(rows, r0 + rt);
        dequantize_rows(*job.weights, *job.quant, which, job.index, hidden, job.inter, r0, r1, wbuf.data());
        MapMat<S> w(wbuf.data(), r1 - r0, k);
        if (row_sq)
          for (std::int64_t r = r0; r < r1; ++r) row_sq[r] = w.row(r - r0).squaredNorm();
        out.middleCols(r0, r1 - r0).noalias() = a * w.transpose();
      }
    }
    return;
  }
  // Few rows: decode one weight row at a time into an L1-sized buffer and take n dot products, so each stored
  // weight byte is read once and nothing expert-sized is materialised.
  // One row at a time: the decoded row stays in L1 for the n dot products (measured: an 8-row tile that spills
  // to L2 streamed weights 1.5x slower on the decode benchmark).
  wbuf.resize(static_cast<std::size_t>(k));
  Eigen::Map<const Eigen::Matrix<S, 1, Eigen::Dynamic>> wr(wbuf.data(), k);
  for (std::int64_t r = 0; r < rows; ++r) {
    dequantize_rows(*job.weights, *job.quant, which, job.index, hidden, job.inter, r, r + 1, wbuf.data());
    for (Eigen::Index i = 0; i < a.rows(); ++i) out(i, r) = a.row(i).dot(wr);
    if (row_sq) row_sq[r] = wr.squaredNorm();
  }
}

// One token's top-k sum and output (docs/numerics.md, steps 7-8): its slots [per_token, H] in top-k order, then
// the shared experts; written[j] says slot j was computed on this rank. slot_weight: the router weights a
// weight=finalize sum multiplies by (nullptr: the slots are weighted already). contract: the reduce, output and
// shared-path rounding points apply.
template <class S>
void reduce_token(const ProblemSpec& s, bool contract, std::int64_t k, std::int64_t per_token, const S* token_slots,
                  const char* written, const S* slot_weight, float* out_row) {
  const std::int64_t h = s.hidden;
  const bool separate = contract && s.n_shared > 0 && s.shared_path == SharedPath::separate;
  std::vector<S> acc(static_cast<std::size_t>(h), S(0)), shared(separate ? static_cast<std::size_t>(h) : 0, S(0));
  for (std::int64_t j = 0; j < per_token; ++j) {
    if (!written[j]) continue;  // EP: another rank's expert
    const S* src = token_slots + j * h;
    S* dst = separate && j >= k ? shared.data() : acc.data();
    if (slot_weight) for (std::int64_t col = 0; col < h; ++col) dst[col] += slot_weight[j] * src[col];
    else for (std::int64_t col = 0; col < h; ++col) dst[col] += src[col];
    if (contract) round_point(dst, h, s.reduce_dtype);  // the accumulator's dtype: rounded after each addition
  }
  if (contract) round_to_dtype(acc.data(), h, s.output_dtype);
  if (separate) {
    // The model adds two outputs: the routed and the shared sums each rounded to the output dtype, then added and
    // rounded again.
    round_to_dtype(shared.data(), h, s.output_dtype);
    for (std::int64_t col = 0; col < h; ++col) acc[col] += shared[col];
    round_to_dtype(acc.data(), h, s.output_dtype);
  }
  for (std::int64_t col = 0; col < h; ++col) out_row[col] = float(acc[col]);
}

}  // namespace moe::engine
