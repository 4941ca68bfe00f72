// The canonical case as JSON (export's case.json, `describe`, and, without its source, the reference cache's key):
// the entries the case-field table names (harness/case/case_fields.cpp), in its order.
#pragma once
#include <string>

#include "harness/case/case_spec.hpp"

namespace moe {

std::string case_to_json_text(const CaseSpec& c);

}  // namespace moe
