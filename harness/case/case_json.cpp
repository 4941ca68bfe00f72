#include "harness/case/case_json.hpp"

#include <nlohmann/json.hpp>

#include "harness/case/case_fields.hpp"

namespace moe {

std::string case_to_json_text(const CaseSpec& c) {
  nlohmann::ordered_json j;
  for (const CaseField& f : case_fields()) {
    if (!f.to_json) continue;
    const std::size_t dot = f.json.find('.');
    f.to_json(c, dot == std::string::npos ? j[f.json] : j[f.json.substr(0, dot)][f.json.substr(dot + 1)]);
  }
  return j.dump(1) + "\n";
}

}  // namespace moe
