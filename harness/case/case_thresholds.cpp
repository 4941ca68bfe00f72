#include "harness/case/case_thresholds.hpp"

namespace moe {

Thresholds case_thresholds(const CaseSpec& c) {
  return apply_override(default_thresholds(c.problem, c.tier), c.tolerance, c.source);
}

}  // namespace moe
