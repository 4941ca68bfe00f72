// The requantization band's explanation test, its columns (docs/judging.md "The band's explanation test"): for one
// band token, each of its slots (routed and shared) is recomputed as the contract does up to the intermediate's
// requantization, and every way a correct kernel's intermediate may legitimately requantize differently becomes a
// basis column of the token's output change (reference/moe/band_fit.hpp fits the error on them):
//  - an element whose value, moved by the declared GEMM1 accumulation error (kExplainSigmas of the envelope's
//    2^-b ||a|| ||w_row||, through the activation) and by kExplainRoundingUlps of the intermediate's dtype, can
//    reach another code under its group's scale: column = router weight * (that code - the reference's) * W2[:, i];
//  - a group (the token, a 1x128 group, an MX block) whose amax can move the same way: one column per distinct
//    requantization its reachable amaxes give (the nearest kExplainScaleSteps each side), times W2; and
//    one column of the group's contribution (a scale off by up to one intermediate ulp of its amax).
// A slot without activation quantization has its intermediate's rounding flips as columns (bf16 / f16), or, with
// an f32 intermediate, its propagated accumulation error as noise. b follows ProblemSpec::accum_bits
// (ensemble.hpp gemm_accum_bits): a kernel declared accum=mma14 gets the wider candidate set it needs.
#pragma once
#include <cstdint>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "reference/moe/band_explanation.hpp"
#include "reference/routing/routing.hpp"

namespace moe {

inline constexpr double kExplainSigmas = 3.0;        // plus the truncation bias where the accumulator truncates
inline constexpr double kExplainRoundingUlps = 1.0;  // of the intermediate's dtype (an extra or another rounding)
inline constexpr int kExplainScaleSteps = 6;    // distinct requantizations of a group, each way
inline constexpr int kExplainScaleWalk = 256;  // intermediate values walked each way to find them

// The systematic maxima's explanation (verdict/systematic.hpp SlotSteps): the nearest distinct requantizations of
// each of a slot's groups, this many each way. One is not enough: a correct fp8 kernel's slot gains reach the third
// and fourth step of the walk (results/runs/2026-12-07-step-explain).
inline constexpr int kStepExplainSteps = 4;

struct BandColumns;  // reference/moe/band_fit.hpp (Eigen): include it to call band_columns

// The columns and the contract noise of `token`'s error; ref_row: the contract reference's row [H].
BandColumns band_columns(const ProblemSpec& p, const Checkpoint& ckpt, const RoutingResult& routing,
                         std::int64_t token, const float* ref_row);

// The output change [H] of each of `token`'s slots' nearest legitimate requantizations: each group's scale moved
// to each of the nearest kStepExplainSteps distinct requantizations each way that its amax reaches under the declared
// GEMM1 accumulation error (kExplainSigmas of it, plus its truncation bias, through the activation), with no extra
// rounding of the intermediate; nothing where the intermediate is not requantized or no step is reachable. slot: -1
// every slot of the token, [0, k) one routed slot (nothing where its expert is not local or its weight is 0), k + e
// the shared expert e (rank 0 only).
std::vector<std::vector<double>> slot_scale_steps(const ProblemSpec& p, const Checkpoint& ckpt,
                                                  const RoutingResult& routing, std::int64_t token, std::int64_t slot);

// band_columns then fit_band_error on error = out - contract of that token ([H], f64).
BandExplanation explain_band_token(const ProblemSpec& p, const Checkpoint& ckpt, const RoutingResult& routing,
                                   std::int64_t token, const float* ref_row, const std::vector<double>& error);

}  // namespace moe
