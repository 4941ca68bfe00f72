// `moe-harness merge`: combines the report.json files of shards (GoogleTest sharding or one process per GPU) into
// one report, and refuses a duplicated (case, kernel) or, given the expected set, a missing one.
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace moe {

struct MergeResult {
  std::string json;                                        // the merged report (schema_version 1)
  std::vector<std::pair<std::string, std::string>> duplicates;  // (kernel, id)
  std::vector<std::pair<std::string, std::string>> missing;     // (kernel, id) expected but in no shard
  int total = 0;
};

// expected: (kernel, id) pairs every shard set must cover; empty: no completeness check.
MergeResult merge_reports(const std::vector<std::filesystem::path>& shards,
                          const std::vector<std::pair<std::string, std::string>>& expected);

}  // namespace moe
