#include "reports/merge.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "fixtures/error.hpp"
#include "reports/run_report.hpp"

namespace moe {

MergeResult merge_reports(const std::vector<std::filesystem::path>& shards,
                          const std::vector<std::pair<std::string, std::string>>& expected) {
  if (shards.empty()) throw_bad_input("command line", "REPORT", "no shard reports given", "pass two or more report.json files");
  MergeResult m;
  nlohmann::ordered_json merged;
  std::set<std::pair<std::string, std::string>> seen;
  int counts[4] = {0, 0, 0, 0};  // pass fail skip error
  for (const auto& path : shards) {
    std::ifstream in(path);
    if (!in) throw_bad_input(path.string(), "", "cannot open the shard report", "pass report.json files written by `moe-harness run`");
    nlohmann::ordered_json j;
    try {
      j = nlohmann::ordered_json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw_bad_input(path.string(), "", std::string("not valid JSON: ") + e.what(), "pass an intact report.json");
    }
    if (!j.contains("schema_version") || j["schema_version"] != kRunReportSchemaVersion || !j.contains("cases"))
      throw_bad_input(path.string(), "schema_version", "not a run report of schema version 1", "merge reports of this harness version");
    if (merged.is_null()) {
      merged = j;
      merged["cases"] = nlohmann::ordered_json::array();
    } else {
      if (j["provenance"]["suite"] != merged["provenance"]["suite"])
        throw_bad_input(path.string(), "provenance.suite", "shards of different suites", "merge shards of one run");
      if (j["provenance"]["start_time"].get<std::string>() < merged["provenance"]["start_time"].get<std::string>())
        merged["provenance"]["start_time"] = j["provenance"]["start_time"];
      if (j["provenance"]["end_time"].get<std::string>() > merged["provenance"]["end_time"].get<std::string>())
        merged["provenance"]["end_time"] = j["provenance"]["end_time"];
    }
    for (const auto& c : j["cases"]) {
      const auto key = std::make_pair(c["kernel"].get<std::string>(), c["id"].get<std::string>());
      if (!seen.insert(key).second) { m.duplicates.push_back(key); continue; }
      const std::string st = c["status"];
      counts[st == "pass" ? 0 : st == "fail" ? 1 : st == "skip" ? 2 : 3]++;
      merged["cases"].push_back(c);
    }
  }
  for (const auto& e : expected)
    if (!seen.count(e)) m.missing.push_back(e);
  m.total = int(merged["cases"].size());
  merged["summary"] = {{"total", m.total}, {"pass", counts[0]}, {"fail", counts[1]}, {"skip", counts[2]}, {"error", counts[3]}};
  m.json = merged.dump(1) + "\n";
  return m;
}

}  // namespace moe
