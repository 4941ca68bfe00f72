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

// `export --suite`: returns the exit code. 0 every selected case exported; 2 some case's own input is bad (an
// activation amax floor that zeroes its contract reference: listed in the index with the reason and failed_check
// bad_input, the others exported), which wins over 3, some case could not be built here (listed with the reason and
// failed_check harness_error); 4 the filters selected no case (nothing written); 128 + N if signal N stopped it.
// Bad input of the command (the suite, --out, two ids with one directory name) throws before anything is written.
int export_suite(const SuiteExportOptions& opt);

}  // namespace moe
