// The canonical case as JSON (export's case.json, `describe`): every field the problem and the harness use.
#pragma once
#include <string>

#include "harness/case_spec.hpp"

namespace moe {

std::string case_to_json_text(const CaseSpec& c);

}  // namespace moe
