// moe_harness/report.hpp and moe_harness/runner.hpp over harness/run/provenance, reports/report_files and the runner.
#include "moe_harness/report.hpp"

#include <string>

#include "fixtures/atomic_file.hpp"
#include "harness/isolation/worker.hpp"
#include "harness/run/output_guard.hpp"
#include "moe_harness/runner.hpp"

namespace moe::api {

std::string version() { return kHarnessVersion; }
std::string build_stamp() { return harness_build_stamp(); }

Provenance make_provenance(const Suite& suite, const std::vector<std::pair<std::string, std::string>>& kernels,
                           const DeviceDetection& device, std::optional<std::uint64_t> seed) {
  Provenance p = moe::make_provenance(suite, kernels, device, seed);
  p.start_time = utc_now_iso8601();
  return p;
}

std::string utc_now() { return utc_now_iso8601(); }

namespace {
const std::vector<std::string> kReportFileNames = {"report.json", "junit.xml", "summary.md", "report.html"};
}

void check_report_dir(const std::filesystem::path& dir, const std::string& key) {
  OutputGuard().output_dir(dir, key, kReportFileNames).check();
}

ReportFiles write_reports(const RunReport& report, const std::filesystem::path& dir) {
  // The suite the verdicts come from is read again by whoever reads the report: it may be none of its files.
  OutputGuard().input(report.provenance.suite_file, "suite").output_dir(dir, "dir", kReportFileNames).check();
  std::filesystem::create_directories(dir);
  const ReportFiles files = ReportFiles::in(dir);
  write_report_files(report, files);
  return files;
}

ReadReport read_report(const std::filesystem::path& file) { return moe::read_report(file); }

int run_suite(const RunOptions& options) { return moe::run_suite(options); }

std::optional<int> worker_main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == kWorkerArg) return run_worker(kWorkerRequestFd, kWorkerRecordFd);
  return std::nullopt;
}

}  // namespace moe::api
