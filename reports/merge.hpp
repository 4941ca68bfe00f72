// `moe-harness merge`: combines the report.json files of shards (GoogleTest sharding or one process per GPU) into
// one report, and refuses a duplicated (case, kernel) or, given the expected set, a missing one.
#pragma once
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace moe {

struct MergeResult {
  std::string json;                                             // the merged report (schema_version 1)
  std::vector<std::pair<std::string, std::string>> duplicates;  // (kernel, id)
  std::set<std::pair<std::string, std::string>> covered;        // (kernel, id) of every merged case
  std::vector<std::string> kernel_ids;                          // every kernel the shards' provenance names
  int total = 0;
};

MergeResult merge_reports(const std::vector<std::filesystem::path>& shards);

// expected (kernel, id) pairs that no shard covers.
std::vector<std::pair<std::string, std::string>> missing_cases(const MergeResult& m,
                                                               const std::vector<std::pair<std::string, std::string>>& expected);

}  // namespace moe
