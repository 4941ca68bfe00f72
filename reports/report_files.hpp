// A run's report files from its records: report.json, junit.xml (JUnit from the records), summary.md and
// report.html (rendered from report.json as read back, so the page shows what the file holds). Each is written
// atomically; an empty path is not written.
#pragma once
#include <filesystem>

#include "reports/run_report.hpp"

namespace moe {

struct ReportFiles {
  std::filesystem::path json, junit, markdown, html;
  // dir/report.json, dir/junit.xml, dir/summary.md, dir/report.html
  static ReportFiles in(const std::filesystem::path& dir);
};

void write_report_files(const RunReport& r, const ReportFiles& files);

}  // namespace moe
