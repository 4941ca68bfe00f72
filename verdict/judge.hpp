// Per-token judging (docs/judging.md). Metrics over the hidden dimension of every token; a case fails on
// the first check that breaks and reports all of them, with the worst tokens and elements.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fixtures/tensor.hpp"
#include "verdict/thresholds.hpp"
#include "reference/moe/band_explanation.hpp"
#include "reference/routing/routing.hpp"
#include "reports/verdict.hpp"

namespace moe {

// The output buffer is pre-filled with a NaN sentinel; an element still bit-equal to it was never written.
std::uint32_t sentinel_bits(DType output_dtype, int which = 0);  // which: 0 first sentinel, 1 the inverse probe
void fill_sentinel(Tensor& out, int which = 0);

// A token with an unwritten or non-finite element has no cos and no rel: both are NaN (null in report.json), and
// such tokens are the worst of all, listed first (lowest index first), ahead of the highest rel.
struct WorstToken {
  std::int64_t token = 0;
  double cos = 0, rel = 0;
  std::int64_t unwritten = 0, non_finite = 0;  // of this token's elements
  std::vector<std::int32_t> experts;
  std::vector<float> weights;
};
// Unwritten and non-finite elements come first (in index order), then the largest |out - ref|.
struct WorstElement {
  std::int64_t token = 0, column = 0;
  float ref = 0, out = 0;  // out: NaN for an unwritten element
  bool unwritten = false;
};

struct Judgement {
  bool pass = false;
  Check failed_check = Check::none;  // the first check that broke, in the order of docs/judging.md (the pipeline
                                     // adds rerun, linearity, harness_error, gating)
  std::string summary;       // one line
  // With any unwritten or non-finite element the output's metrics are undefined and NaN: min_cos and max_rel (at the
  // first such token), max_abs, out_norm and the ideal ones; mismatches count those elements as outside the band.
  // ref_norm is over every reference element, whatever the output holds.
  double min_cos = 1, max_rel = 0, max_abs = 0, mismatch_fraction = 0;
  std::int64_t min_cos_token = -1, max_rel_token = -1, mismatches = 0, non_finite = 0, unwritten = 0, bit_mismatches = 0;
  double ref_norm = 0, out_norm = 0;
  double ideal_min_cos = 1, ideal_max_rel = 0;  // kernel vs the ideal reference: the recipe's quantization error
  // The requantization band (Thresholds::band_factor): tokens below min_cos inside it, how many may pass, and the
  // largest rel / (band_factor * q_t) among them (the band's use: 1 at its edge). strict_min_cos, strict_max_rel:
  // the lowest cos and the largest rel of the tokens min_cos and max_rel judge (every token when the band tokens
  // are more than the allowance; a band token's rel is bounded by its edge instead).
  std::int64_t band_tokens = 0, band_allowance = 0;
  double band_max_ratio = 0, strict_min_cos = 1, strict_max_rel = 0;
  // What mismatch_fraction judges: the fraction of elements outside the tolerance in the tokens outside the band
  // (the band's tokens while it holds, and mismatch_band_tokens: tokens that joined it for their elements outside
  // the tolerance, inside the edge and explained, while the fraction was over its limit; within the allowance).
  double strict_mismatch_fraction = 0;
  std::int64_t mismatch_band_tokens = 0;
  // The band's explanation test (docs/judging.md "The band's explanation test"), over the tokens the band's rule
  // took: explained ones stay in the band, rejected ones (residual above kExplainMaxRatio x the contract noise)
  // leave it and are judged like any token; undecisive: explained, but the columns span so much of H that an error
  // of that size in a random direction would be too. band_explain_ratio: the largest residual ratio tested.
  // band_explain_run: false where no explainer was given (no weights: an exported reference).
  bool band_explain_run = false;
  std::int64_t band_explained = 0, band_rejected = 0, band_undecisive = 0;
  double band_explain_ratio = 0;
  std::vector<std::pair<std::int64_t, BandExplanation>> band_explanations;  // token, what its test found
  std::vector<double> token_noise;  // q_t per token (empty without an ideal reference)
  std::vector<double> token_cos, token_rel;
  std::vector<WorstToken> worst_tokens;
  std::vector<WorstElement> worst_elements;
  std::string details() const;  // multi-line: every metric, worst tokens, worst elements
  std::string band_explain_lines() const;  // the explanation test's lines of details() ("" when it had no token)
};

// The band's explanation test for one token inside the band: given its error out - contract [H] (f64), whether
// requantization explains it (reference/moe/band_explain.hpp computes it from the case's weights).
using BandExplainer = std::function<BandExplanation(std::int64_t token, const std::vector<double>& error)>;

// ref: contract reference [T, H]; ideal: ideal reference [T, H] (may be empty); out: the kernel's output tensor.
// explain: the band's explanation test; empty: the band's rule alone (the details say the test did not run).
// A non-finite reference is a harness error (throws), never a verdict.
Judgement judge(const std::vector<float>& ref, const std::vector<float>& ideal, const Tensor& out,
                std::int64_t tokens, std::int64_t hidden, const Thresholds& th, const RoutingResult& routing,
                const BandExplainer& explain = {});

}  // namespace moe
