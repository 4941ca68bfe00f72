// Suites and cases: find a suite file, load and expand it (sweeps, presets, defaults), select cases by id.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "moe_harness/types.hpp"

namespace moe::api {

// The file a suite name names ("smoke" -> <cases dir>/smoke.yaml: $MOE_CASES_DIR, else the suites installed beside
// this program, else the source tree's cases/); a path (holding '/' or ending in .yaml) is returned as is.
std::filesystem::path resolve_suite(const std::string& name_or_path);

// The suite, validated and expanded, keeping the cases `filters` select (case_selected); bad input throws
// moe::Error naming the file, line, key and fix (exit 2).
Suite load_suite(const std::string& name_or_path, const std::vector<std::string>& filters = {});

// Whether glob filters on case ids ('*', '?'; a leading '-' excludes) select `id`; no filter selects every case.
bool case_selected(const std::vector<std::string>& filters, const std::string& id);

// The case with this canonical id; bad input naming the suite file (and how to list its ids) when it has none.
const CaseSpec& find_case(const Suite& suite, const std::string& id);

// The case in its canonical JSON form: `describe`'s output, `export`'s case.json.
std::string case_json(const CaseSpec& c);

}  // namespace moe::api
