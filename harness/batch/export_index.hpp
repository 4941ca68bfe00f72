// The index `moe-harness export --suite` writes last into its output directory (DIR/index.json) and `judge --dir`
// reads first: which cases were exported into which sub-directory, which were not and why, and what each exported
// reference was computed from, so the judge can tell whether it may use it (docs/architecture.md "Batch export
// and judge").
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/pipeline/reference_cache.hpp"
#include "reports/verdict.hpp"

namespace moe {

inline constexpr const char* kExportIndexFile = "index.json";
// The version this harness writes and reads (one with `failed_check` on a case not exported); another is refused.
inline constexpr int kExportIndexVersion = 2;

// The sub-directory of a case id: letters, digits and `. + - _ , =` kept, '/' spelled '~', every other byte '%'
// and two lower-case hex digits, so two ids never share a name (the spelling decodes back to the id). A name
// past kMaxCaseDirName bytes keeps its first part and ends in '#' and 16 hex digits of the id's hash; export
// refuses two ids whose shortened names collide.
inline constexpr std::size_t kMaxCaseDirName = 200;
std::string case_dir_name(const std::string& id);

struct ExportEntry {
  std::string id;
  bool exported = false;
  std::string dir;     // sub-directory holding the case (exported)
  std::string reason;  // why it was not exported (its own bad input, or the host could not build it)
  // Not exported: bad_input when the case's own input is bad (fixtures/error.hpp CaseInputError: an activation amax
  // floor that zeroes the contract reference; export and judge --dir exit 2), else harness_error (exit 3).
  Check failed_check = Check::none;
  std::uint64_t fixture_fingerprint = 0;
  std::uint64_t reference_hash = 0;  // reference_hash() of the exported references
  std::string reference_key;         // ReferenceCache::key they were computed under
};

struct ExportIndex {
  std::string suite;       // as given to export (a name or a path)
  std::string suite_file;  // absolute path of the suite file
  std::uint64_t suite_hash = 0;
  std::vector<std::string> filters;
  std::string harness;            // build stamp of the exporting binary
  std::string reference_version;  // reference_version() of the exporting binary
  std::vector<ExportEntry> cases;
};

std::string export_index_json(const ExportIndex& index);
// DIR/index.json read back; a missing, unreadable or malformed index is bad input naming the file and the key.
ExportIndex read_export_index(const std::filesystem::path& dir);

// A hash over the routing ids and weights and both references: what export records and judge compares, so a
// reference file changed after export is never used.
std::uint64_t reference_hash(const ReferenceSet& r);

}  // namespace moe
