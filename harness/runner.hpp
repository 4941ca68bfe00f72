// `moe-harness run`: every expanded (case, kernel) is one GoogleTest test registered at start-up
// (testing::RegisterTest) as gtest_test_name(kernel id) . gtest_test_name(case id), so --gtest_filter, sharding
// (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX), --gtest_repeat and shuffle work unchanged. Beside the JUnit XML:
// report.json (versioned), summary.md and report.html, written atomically into one report directory per run.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/gating.hpp"
#include "harness/provenance.hpp"  // kHarnessVersion, harness_build_stamp
#include "kernels/gpu/dispatch_options.hpp"
#include "reports/junit_report.hpp"  // gtest_test_name: the GoogleTest name of a kernel or case id
#include "kernels/kernel_under_test.hpp"

namespace moe {

struct RunOptions {
  std::string suite = "smoke";
  std::vector<std::string> filters;  // glob patterns on case ids ('*', '?'); a leading '-' excludes
  std::vector<std::string> kernels;  // kernel ids; empty = every kernel available in this build (unless extra_kernels)
  // Kernels built by the caller (an external output file, a plugin); with `kernels` empty, only these run.
  std::vector<std::shared_ptr<KernelUnderTest>> extra_kernels;
  std::vector<std::string> plugins;  // plugin library paths (kernels/plugin/moe_plugin.h), judged like extra kernels
  std::optional<std::uint64_t> seed;
  std::filesystem::path report_dir;  // default reports-out/<UTC timestamp>
  std::filesystem::path junit, json; // default inside report_dir
  DeviceRequirement device;
  std::filesystem::path reference_cache;  // empty: no cache (harness/reference_cache.hpp)
  bool timing = true;                     // kernels time themselves after the verdict run (--no-timing: off)
  gpu::DispatchOptions dispatch;         // the GPU kernels' A/B switches (--dispatch)
  double host_budget = 0;            // 0: the host kernel's default
  std::vector<std::string> gtest_args;  // passed through to GoogleTest; one it does not know is bad input
  bool verbose = false;                 // GoogleTest's own log and a line per case (harness/progress.hpp)
  // Fault containment (harness/isolation/): cases judged in worker processes under a watchdog unless
  // --no-isolation; --case-timeout beats every case's limit; --resume DIR continues a run from its journal.
  bool isolation = true;
  std::optional<double> case_timeout_s;
  int jobs = 1;         // worker processes judging at once (--jobs; harness/isolation/jobs.hpp)
  int job_threads = 0;  // each worker's OpenMP threads (--job-threads); 0: the default for jobs
  std::filesystem::path resume;
  // --dispatch-table: each case dispatches from its row of a tuned table set, the tables' paths ':'-separated in
  // set order (docs/tuning.md "Table sets"); empty: none.
  std::filesystem::path dispatch_table;
};

// Returns the process exit code (README "Exit codes"): 128 + N when signal N (SIGINT, SIGTERM) stopped the run;
// else 3 for a harness or device error (a crashed, hung or overgrown case included), 1 a case failed, 2 bad input,
// 4 nothing checked (the filters selected no case, or no (case, kernel) was judged; in a GoogleTest shard only the
// first: the merged report judges the whole), 0 all passed (skips allowed unless a device was required).
int run_suite(const RunOptions& opt);


bool glob_match(const std::string& pattern, const std::string& text);
bool case_selected(const std::vector<std::string>& filters, const std::string& id);

}  // namespace moe
