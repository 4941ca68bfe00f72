// moe_harness/suite.hpp over harness/case/case_loader and harness/case/case_json.
#include "moe_harness/suite.hpp"

#include "harness/case/case_json.hpp"
#include "harness/run/runner.hpp"

namespace moe::api {

std::filesystem::path resolve_suite(const std::string& name_or_path) { return moe::resolve_suite(name_or_path); }

Suite load_suite(const std::string& name_or_path, const std::vector<std::string>& filters) {
  Suite s = load_suite_file(moe::resolve_suite(name_or_path));
  if (!filters.empty())
    std::erase_if(s.cases, [&](const CaseSpec& c) { return !moe::case_selected(filters, c.id); });
  return s;
}

bool case_selected(const std::vector<std::string>& filters, const std::string& id) {
  return moe::case_selected(filters, id);
}

const CaseSpec& find_case(const Suite& suite, const std::string& id) { return moe::find_case(suite, id); }

std::string case_json(const CaseSpec& c) { return case_to_json_text(c); }

}  // namespace moe::api
