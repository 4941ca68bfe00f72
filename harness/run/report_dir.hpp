// The report directory of one run: the one asked for, or reports-out/<UTC time in ISO 8601's basic format, e.g.
// 20261201T085213Z: no ':', which CI artifact uploaders refuse>, with -2, -3, ... when another run took that second's
// name (claimed with mkdir, so two runs never share one). It is claimed before GoogleTest reads its flags (the JUnit
// path is one of them); unless keep() is called, the directories it created are removed again when still empty, so a
// usage error or --gtest_list_tests leaves nothing behind.
// A report directory belongs to one run at a time (docs/reliability.md "One run per report directory"): claiming it
// takes an exclusive flock(2) on DIR/.moe-run.lock, which holds the holder's pid and command line. A second run into
// it is bad input naming them; a lock file without a holder (its run was killed: the kernel releases a flock when
// its holder dies) is taken over with a notice on stderr. The lock file goes when the directory is released.
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "harness/run/output_guard.hpp"
#include "harness/run/run_options.hpp"

namespace moe {

inline constexpr const char* kReportDirLockFile = ".moe-run.lock";

class ReportDirLock {
 public:
  // Bad input (exit 2) naming `key` and the holder when another process holds the lock.
  ReportDirLock(const std::filesystem::path& dir, const std::string& key);
  ~ReportDirLock();
  ReportDirLock(const ReportDirLock&) = delete;
  ReportDirLock& operator=(const ReportDirLock&) = delete;
  void release();  // removes the lock file (while holding the lock) and closes it

 private:
  std::filesystem::path file_;
  int fd_ = -1;
};

class ReportDir {
 public:
  explicit ReportDir(const std::filesystem::path& asked);  // empty: the default under reports-out/
  ~ReportDir();
  ReportDir(const ReportDir&) = delete;
  ReportDir& operator=(const ReportDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void keep() { created_.clear(); }

 private:
  std::filesystem::path path_;
  std::vector<std::filesystem::path> created_;  // the leaf first
  std::unique_ptr<ReportDirLock> lock_;
};

// The files a run writes into its report directory: journal.jsonl, summary.md, report.html, the lock file, and
// report.json and junit.xml unless --json / --junit send them elsewhere.
std::vector<std::string> report_dir_files(const RunOptions& o);

// A run's inputs (--suite, each --dispatch-table table, each --plugin) and outputs (--report-dir's files, --junit,
// --json) for the output guard; the caller adds inputs of its own, then check()s.
OutputGuard run_output_guard(const RunOptions& o);

}  // namespace moe
