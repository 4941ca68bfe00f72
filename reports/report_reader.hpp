// Reads a run report (report.json, schema_version 1) back for compare, gate, merge and html. Bad files are bad input
// (every field checked: reports/record_json.hpp).
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "reports/run_report.hpp"
#include "reports/verdict.hpp"

namespace moe {

struct ReportCase {
  std::string id, kernel, reason, variant, details;
  Status status = Status::error;
  Check failed_check = Check::none;
  std::string fixture_fingerprint;  // 16 hex digits; all zeros where no fixture was built (skips)
  std::map<std::string, double> metrics;
  std::vector<double> token_cos, token_rel;
  CaseTiming timing;  // timing.phases_s; zeros for a report written without it
  std::vector<StatisticRecord> systematic;  // absent in reports written before the systematic checks: empty
  ContractRecord contract;                  // absent for skips and in reports written before contracts: empty
};

struct ReadReport {
  std::string file, suite, device_arch, device_name, harness_commit, device_message, start_time, end_time;
  std::vector<std::string> kernels;     // "id version"
  std::vector<std::string> kernel_ids;  // the ids alone, in the same order
  std::vector<ReportCase> cases;
  bool incomplete = false;  // provenance.incomplete: the run stopped before judging everything it selected
  std::string incomplete_reason;
  // The first case recorded for (id, kernel), or nullptr. Constant time (compare and gate look up every case): the
  // cases are indexed on first use, the index follows cases appended later and is rebuilt when the vector was
  // replaced or shrunk. Set a case's id and kernel before the first find.
  const ReportCase* find(const std::string& id, const std::string& kernel) const;

 private:
  mutable std::unordered_map<std::string, std::size_t> index_;  // kernel '\0' id -> position in cases
  mutable std::size_t indexed_ = 0;                             // cases[0, indexed_) are in index_
  mutable const ReportCase* indexed_data_ = nullptr;            // cases.data() when they were indexed
};

ReadReport read_report(const std::filesystem::path& file);

}  // namespace moe
