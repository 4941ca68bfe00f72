// Suite files (cases/*.yaml) -> validated, expanded cases. Schema in docs/cases.md. Every problem is a
// moe::Error(bad_input) naming the file, line, key and the fix: unknown keys, wrong types, unknown enum names,
// impossible shapes, contract mismatches, duplicate ids, loosened tolerances without a reason, non-finite or
// out-of-range numbers, element counts past int64, cases past the machine's host memory (fixtures/problem_sizes.hpp),
// malformed YAML nodes, text that is not UTF-8, and the limits below (docs/cases.md "Limits").
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "fixtures/input_limits.hpp"
#include "harness/case/case_spec.hpp"

namespace moe {

// Cases after expanding every sweep: kernel sweeps run to thousands of (shape, scheme, token) combinations, and
// the loader and the runner are linear in the count, so a million leaves room while a typo is refused at once.
inline constexpr std::size_t kMaxSuiteCases = 1000000;

struct Suite {
  std::string name;
  std::string description;
  std::string file;
  std::uint64_t file_hash = 0;  // of the file's bytes, for report provenance
  std::vector<CaseSpec> cases;  // a call sequence: its steps, in run order
  // `sequence: {order, seed}` (docs/cases.md): the cases are steps run in this order on one kernel object.
  bool sequence = false;
  std::string sequence_order;  // "scripted" | "shuffled"
  std::uint64_t sequence_seed = 0;
};

// sequence_seed: `run --sequence-seed`, replaces a call sequence's `seed` (ignored by other suites).
Suite load_suite_file(const std::filesystem::path& file, std::optional<std::uint64_t> sequence_seed = std::nullopt);
Suite load_suite_text(const std::string& text, const std::string& file_label,
                      std::optional<std::uint64_t> sequence_seed = std::nullopt);  // tests
// "smoke" -> <cases dir>/smoke.yaml; a path (contains '/' or ends in .yaml) is used as is. The cases dir is
// $MOE_CASES_DIR when set, else the source tree's cases/.
std::filesystem::path resolve_suite(const std::string& name_or_path);
// The case with this canonical id; bad_input naming the suite file (and how to list ids) when there is none.
const CaseSpec& find_case(const Suite& s, const std::string& id);

}  // namespace moe
