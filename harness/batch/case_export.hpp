// What `moe-harness export` writes (docs/export.md): for one case, fixture.safetensors, reference.safetensors and
// case.json in one directory; for a suite (`export --suite S [--filter GLOB] --out DIR`), one such directory per case,
// each written into a temporary directory and renamed into place once whole, then DIR/index.json
// (harness/batch/export_index.hpp), atomically and last.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/batch/export_index.hpp"
#include "harness/case/case_spec.hpp"
#include "harness/pipeline/weight_cache.hpp"

namespace moe {

// c's fixture and references, computed fully before anything is written, then the three files in `dir` (created).
// Returns the index entry (fingerprint, reference hash and key; dir left to the caller). `weights` (optional)
// shares expert weights between the cases of one export.
ExportEntry export_case(const CaseSpec& c, const std::filesystem::path& dir, WeightCache* weights = nullptr);

struct SuiteExportOptions {
  std::string suite = "smoke";
  std::vector<std::string> filters;
  std::filesystem::path out;
};

// `export --suite`: returns the exit code. 0 every selected case exported; 3 some case could not be built here
// (listed in the index with the reason, the others exported); 4 the filters selected no case (nothing written).
// Bad input (the suite, --out, two ids with one directory name) throws before anything is written.
int export_suite(const SuiteExportOptions& opt);

}  // namespace moe
