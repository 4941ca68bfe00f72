// Pass/fail criteria published by the anchor projects, re-implemented from their formulas so the selftest can put
// them beside ours on the same mutants (docs/judging.md). Each returns true when the criterion would FAIL the
// output, with IEEE comparisons exactly as the original code has them (a NaN that compares false is not a mismatch
// there).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace moe {

struct AnchorCriterion {
  std::string name;
  std::string source;
  bool (*fails)(const std::vector<float>& ref, const std::vector<float>& out, std::int64_t tokens, std::int64_t hidden);
};

const std::vector<AnchorCriterion>& anchor_criteria();

}  // namespace moe
