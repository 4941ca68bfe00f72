// Reads a run report (report.json, schema_version 1) back for compare, gate and merge. Bad files are bad input.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace moe {

struct ReportCase {
  std::string id, kernel, status, reason, variant, failed_check, details;
  std::map<std::string, double> metrics;
  std::vector<double> token_cos, token_rel;
};

struct ReadReport {
  std::string file, suite, device_arch, device_name, harness_commit, device_message, start_time, end_time;
  std::vector<std::string> kernels;  // "id version"
  std::vector<ReportCase> cases;
  bool incomplete = false;  // provenance.incomplete: the run stopped before judging everything it selected
  const ReportCase* find(const std::string& id, const std::string& kernel) const;
};

ReadReport read_report(const std::filesystem::path& file);

}  // namespace moe
