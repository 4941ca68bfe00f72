// Per-token judging (DESIGN.md "Judging a case"). Metrics over the hidden dimension of every token; a case fails on
// the first check that breaks and reports all of them, with the worst tokens and elements.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fixtures/tensor.hpp"
#include "harness/thresholds.hpp"
#include "reference/routing/routing.hpp"

namespace moe {

// The output buffer is pre-filled with a NaN sentinel; an element still bit-equal to it was never written.
std::uint32_t sentinel_bits(DType output_dtype, int which = 0);  // which: 0 first sentinel, 1 the inverse probe
void fill_sentinel(Tensor& out, int which = 0);

struct WorstToken {
  std::int64_t token = 0;
  double cos = 0, rel = 0;
  std::vector<std::int32_t> experts;
  std::vector<float> weights;
};
struct WorstElement {
  std::int64_t token = 0, column = 0;
  float ref = 0, out = 0;
};

struct Judgement {
  bool pass = false;
  std::string failed_check;  // "", "unwritten", "non_finite", "zero_output", "bitwise", "min_cos", "max_rel",
                             // "mismatch_fraction" (the pipeline adds "rerun", "harness_error", "gating")
  std::string summary;       // one line
  double min_cos = 1, max_rel = 0, max_abs = 0, mismatch_fraction = 0;
  std::int64_t min_cos_token = -1, max_rel_token = -1, mismatches = 0, non_finite = 0, unwritten = 0, bit_mismatches = 0;
  double ref_norm = 0, out_norm = 0;
  double ideal_min_cos = 1, ideal_max_rel = 0;  // kernel vs the ideal reference: the recipe's quantization error
  std::vector<double> token_cos, token_rel;
  std::vector<WorstToken> worst_tokens;
  std::vector<WorstElement> worst_elements;
  std::string details() const;  // multi-line: every metric, worst tokens, worst elements
};

// ref: contract reference [T, H]; ideal: ideal reference [T, H] (may be empty); out: the kernel's output tensor.
// A non-finite reference is a harness error (throws), never a verdict.
Judgement judge(const std::vector<float>& ref, const std::vector<float>& ideal, const Tensor& out,
                std::int64_t tokens, std::int64_t hidden, const Thresholds& th, const RoutingResult& routing);

}  // namespace moe
