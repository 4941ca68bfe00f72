// Systematic-error checks over all T x H elements, beside the per-token checks of verdict/judge.hpp. A correct
// kernel differs from the contract reference only by its summation order: its errors are small AND unbiased, so
// statistics pooled over the whole output see biases far below any per-element or per-token tolerance. Each
// statistic is standardized (a z-score under the null hypothesis of a correct kernel) and fails when its z passes
// a significance level and its effect size passes a floor (SystematicThresholds; docs/judging.md "Systematic
// errors" gives every formula, null hypothesis and threshold):
//   gain           slope b = sum(o r) / sum(r^2) of the output on the reference; z = (b - 1) / se(b), effect b - 1;
//   channel        each hidden channel's error energy over the tokens, in units of its tokens' typical element
//                  error, as a chi-square with T degrees of freedom turned into a z; effect: the channel's relative
//                  error sqrt(sum_t e^2 / sum_t r^2);
//   rounding_bias  mean of (o - r) / ulp_out(r) * sign(r) (clipped to +-2 ulps); z = mean / se, effect the mean
//                  (round to nearest even: 0; truncation toward zero: -0.5);
//   expert         per local expert, its own gain: the slope of the error on that expert's contributions to the
//                  reference (with the slots), else the gain of its tokens minus the others'; z = slope / se;
//   offset         the mean signed error over every element; z = mean / se, effect the mean over mean |r|;
//   token_gain     each token's own slope b_t - 1 with its element-wise se; the token closest to failing.
//   expert_partial, slot_direction, channel_group: part of an expert's tokens, one direction of every slot, a group
//                  of channels (verdict/systematic_partial.hpp).
// A statistic that cannot be computed (one token, no error at all, non-finite output) is "not run: <why>".
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "fixtures/tensor.hpp"
#include "verdict/thresholds.hpp"
#include "reference/routing/routing.hpp"
#include "reports/run_report.hpp"

namespace moe {

inline constexpr const char* kSystematicNames[] = {"gain",       "channel",        "rounding_bias",  "expert",
                                                   "offset",     "token_gain",     "expert_partial", "slot_direction",
                                                   "channel_group"};
inline constexpr double kRoundingClipUlps = 2.0;  // |error| beyond 2 ulps is upstream noise, not output rounding
inline constexpr double kZCap = 1e9;               // z of an error with no spread around a nonzero mean

struct SystematicInput {
  std::span<const float> ref;     // contract reference [T, H] (already rounded to the output dtype)
  const Tensor& out;              // the kernel's output [T, H] in its dtype
  std::int64_t tokens = 0, hidden = 0;
  const RoutingResult& routing;
  std::int64_t first_local_expert = 0, local_experts = 0;  // EP: the experts of this rank
  // Each routed slot's contribution to the reference [T, k, H] (ReferenceSet::slots), or empty: with it, `expert`
  // estimates each expert's own gain by regressing the error on that expert's contributions.
  std::span<const float> slots = {};
  // The output change [H] of each legitimate requantization step of a token's slots (reference/moe/band_explain.hpp
  // slot_scale_steps; token: a row of this input, slot: -1 every slot of the token, [0, k) a routed slot, k + e the
  // shared expert e), or empty.
  // With it, expert_partial and token_gain take a large component's z after the step nearest its effect
  // (explain_steps, verdict/systematic_max.hpp): a requantization scale that the fp8 units' accumulation moves by
  // one step moves one token-slot by a percent or two, a legitimate error far out in the element-wise z's tail.
  using SlotSteps = std::function<std::vector<std::vector<double>>(std::int64_t token, std::int64_t slot)>;
  SlotSteps steps = {};
};

// The statistics, in kSystematicNames' order (the verdict's order). Never throws for an output it can read.
std::vector<StatisticRecord> systematic_checks(const SystematicInput& in, const SystematicThresholds& th);

// The statistics, each "not run: <why>" (the exact tier, a failed gate).
std::vector<StatisticRecord> systematic_not_run(const std::string& why, const SystematicThresholds& th);

// The first failing statistic, or nullptr.
const StatisticRecord* first_failure(const std::vector<StatisticRecord>& stats);

// One line per statistic for the diagnostics, and one phrase for a failure's reason.
std::string systematic_lines(const std::vector<StatisticRecord>& stats);
std::string systematic_reason(const StatisticRecord& s);

// One unit in the last place of the output dtype at |r| (the spacing above |r|; subnormal spacing below the
// smallest normal).
double ulp_out(double r, DType output_dtype);

}  // namespace moe
