// The simulated envelope of legitimate variation (docs/judging.md "The envelope"): members are contract references
// recomputed under draws of what a correct kernel may do differently from the reference while keeping the contract:
//  - each GEMM's accumulation error: an output element v = a . w of a GEMM accumulating with b significand bits
//    (24 for exact fp32; the contract point `accum` for GEMMs whose operands are both 8-bit) is moved by
//    2^-b ||a|| ||w|| (xi - beta sign(v)), xi of zero mean and unit variance (uniform); beta = kTruncationBias for b < 24 (a matrix unit
//    truncates its aligned addends toward zero), 0 for fp32 (rounding to nearest: no bias);
//  - the activation's last bits (exp, tanh, erf of another library): act(g) * u moved by 2^-22 relative
//    (act_noise; a "rounding" ensemble moves it by half an ulp of the intermediate's dtype instead, so that about a
//    third of the intermediate's roundings flip: the correlation structure of an extra rounding, for the
//    statistics' variances);
//  - a "sparse" ensemble: the GEMMs' error at kSparseGemmScale of the declared accumulation's and without its
//    truncation bias, so that a few of a token-slot's intermediate codes step, as on the hardware, where the
//    accumulation members and the rounding ensemble move many (the null of the maxima, docs/judging.md);
// and every rounding and requantization of the contract applied after them, so a code that a perturbation carries
// across a rounding boundary flips in the member as it would in a kernel. Members are computed for a subset of the
// tokens (all of them up to kEnsembleMaxTokens), sharing the contract's dequantized weights.
#pragma once
#include <cstdint>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "reference/moe/reference_moe.hpp"
#include "reference/routing/routing.hpp"

namespace moe {

inline constexpr int kEnsembleMembers = 8;
inline constexpr std::int64_t kEnsembleMaxTokens = 32;
inline constexpr double kActivationNoise = 1.0 / (1 << 22);  // relative, the activation's last bits
inline constexpr double kTruncationBias = 1.0;               // beta, in units of the accumulation's sigma
// A sparse member's GEMM error, in units of the declared accumulation's 2^-b ||a|| ||w||: the H100's fast fp8
// accumulation errs 0.194 of that unit on average at the nightly's K (results/runs/2026-12-07-t1-mismatch), and a
// unit-variance uniform draw's mean |xi| is 0.866, so 1/4 puts the members' mean error at 0.22 units.
inline constexpr double kSparseGemmScale = 0.25;
// The sparse ensemble's size, and its tokens: every token up to kSparseMaxTokens. A maximum's heavy tail belongs to
// particular token-slots (one whose intermediate a few elements carry), so its members judge the kernel's own slots
// wherever the case is that small, not a sample of them.
inline constexpr int kSparseMembers = 8;
inline constexpr std::int64_t kSparseMaxTokens = 128;

struct EnsembleSpec {
  int members = kEnsembleMembers;
  std::uint64_t seed = 0;
  double act_noise = kActivationNoise;  // relative, on act(g) * u before the intermediate's rounding
  bool gemm_noise = true;               // false: the GEMMs' accumulation error is not drawn (a rounding ensemble)
  double gemm_scale = 1.0;              // the GEMMs' error in units of 2^-b ||a|| ||w|| (kSparseGemmScale: sparse)
  bool truncation = true;               // false: no truncation bias below 24 bits (the error's spread alone)
  std::vector<std::int64_t> tokens;  // the simulated tokens, ascending, each in [0, T)
};

// The tokens an ensemble of a T-token case simulates: every token up to `cap`, else that many evenly spaced
// (floor(i T / cap)).
std::vector<std::int64_t> ensemble_tokens(std::int64_t tokens, std::int64_t cap = kEnsembleMaxTokens);

// Half an ulp of the intermediate's dtype, relative (bf16 2^-9, f16 2^-12, f32 2^-25): a rounding ensemble's
// act_noise.
double half_ulp_noise(IntermediateDtype d);

// The accumulation bits of a GEMM of p's scheme q: p.accum_bits where both operands are 8-bit (an fp8 or MX weight
// and a quantized activation), else 24 (fp32).
int gemm_accum_bits(const ProblemSpec& p, const QuantScheme& q);

// members[m] holds member m's output for e.tokens, [e.tokens.size(), H], rounded to the output dtype like the
// contract reference.
std::vector<Values> reference_ensemble(const ProblemSpec& p, const Checkpoint& ckpt, const RoutingResult& routing,
                                       const EnsembleSpec& e);

// Several ensembles over the same tokens in one pass (out[g][m]: group g's member m, as reference_ensemble would give
// it): each expert's weights are decoded and its stage-1 GEMM computed once for every member of every group. Groups
// with different tokens are a harness error.
std::vector<std::vector<Values>> reference_ensembles(const ProblemSpec& p, const Checkpoint& ckpt,
                                                     const RoutingResult& routing, const std::vector<EnsembleSpec>& groups);

}  // namespace moe
