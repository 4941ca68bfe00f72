#include "reports/merge.hpp"

#include <algorithm>
#include <utility>

#include "fixtures/error.hpp"
#include "reports/report_json.hpp"

namespace moe {

MergeResult merge_reports(const std::vector<std::filesystem::path>& shards) {
  if (shards.empty()) throw_bad_input("command line", "REPORT", "no shard reports given", "pass two or more report.json files");
  MergeResult m;
  nlohmann::ordered_json merged;
  int counts[4] = {0, 0, 0, 0};  // pass fail skip error
  std::string suite, start, end;
  for (const auto& path : shards) {
    nlohmann::ordered_json j = read_report_json(path);
    const ReadReport r = parse_report(j, path.string());  // every field merge reads is present and typed
    // The shard's cases move into the merged report (never copied): memory stays that of the reports themselves.
    nlohmann::ordered_json cases = std::move(j["cases"]);
    for (const auto& k : r.kernel_ids)
      if (std::find(m.kernel_ids.begin(), m.kernel_ids.end(), k) == m.kernel_ids.end()) m.kernel_ids.push_back(k);
    if (merged.is_null()) {
      merged = std::move(j);
      merged["cases"] = nlohmann::ordered_json::array();
      suite = r.suite, start = r.start_time, end = r.end_time;
    } else {
      if (r.suite != suite)
        throw_bad_input(path.string(), "provenance.suite", "shards of different suites ('" + r.suite + "' and '" + suite + "')",
                        "merge shards of one run");
      start = std::min(start, r.start_time);
      end = std::max(end, r.end_time);
    }
    for (std::size_t i = 0; i < r.cases.size(); ++i) {
      const ReportCase& c = r.cases[i];
      const auto key = std::make_pair(c.kernel, c.id);
      if (!m.covered.insert(key).second) { m.duplicates.push_back(key); continue; }
      counts[c.status == "pass" ? 0 : c.status == "fail" ? 1 : c.status == "skip" ? 2 : 3]++;
      merged["cases"].push_back(std::move(cases[i]));
    }
  }
  merged["provenance"]["start_time"] = start;
  merged["provenance"]["end_time"] = end;
  m.total = int(merged["cases"].size());
  merged["summary"] = {{"total", m.total}, {"pass", counts[0]}, {"fail", counts[1]}, {"skip", counts[2]}, {"error", counts[3]}};
  m.json = merged.dump(1) + "\n";
  return m;
}

std::vector<std::pair<std::string, std::string>> missing_cases(const MergeResult& m,
                                                               const std::vector<std::pair<std::string, std::string>>& expected) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : expected)
    if (!m.covered.count(e)) out.push_back(e);
  return out;
}

}  // namespace moe
