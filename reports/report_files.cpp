#include "reports/report_files.hpp"

#include "fixtures/atomic_file.hpp"
#include "fixtures/error.hpp"
#include "reports/html_report.hpp"
#include "reports/junit_report.hpp"
#include "reports/report_reader.hpp"

namespace moe {

ReportFiles ReportFiles::in(const std::filesystem::path& dir) {
  return {dir / "report.json", dir / "junit.xml", dir / "summary.md", dir / "report.html"};
}

void write_report_files(const RunReport& r, const ReportFiles& f) {
  if (!f.html.empty() && f.json.empty())
    throw_bad_input("report files", "json", "report.html is rendered from report.json", "give a report.json path too");
  write_reports(r, f.json, f.markdown);
  if (!f.junit.empty()) write_file_atomically(f.junit, to_junit_xml(r));
  if (!f.html.empty()) write_file_atomically(f.html, to_html(read_report(f.json)));
}

}  // namespace moe
