// What a case is judged by: its scheme's default thresholds (verdict/thresholds.hpp) with the case's override
// applied (the run pipeline and calibrate alike).
#pragma once
#include "harness/case/case_spec.hpp"
#include "verdict/thresholds.hpp"

namespace moe {

Thresholds case_thresholds(const CaseSpec& c);

}  // namespace moe
