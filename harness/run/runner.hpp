// `moe-harness run`: every expanded (case, kernel) is one GoogleTest test registered at start-up
// (testing::RegisterTest) as gtest_test_name(kernel id) . gtest_test_name(case id), so --gtest_filter, sharding
// (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX), --gtest_repeat and shuffle work unchanged. Beside the JUnit XML:
// report.json (versioned), summary.md and report.html, written atomically into one report directory per run.
#pragma once
#include <string>
#include <vector>

#include "harness/run/provenance.hpp"  // kHarnessVersion, harness_build_stamp
#include "harness/run/run_options.hpp"
#include "reports/junit_report.hpp"  // gtest_test_name: the GoogleTest name of a kernel or case id

namespace moe {

// Returns the process exit code (docs/cli.md "Exit codes"): 128 + N when signal N (SIGINT, SIGTERM) stopped the run;
// else 3 for a harness or device error (a crashed, hung or overgrown case included), 1 a case failed, 2 bad input,
// 4 nothing checked (the filters selected no case, or no (case, kernel) was judged; in a GoogleTest shard only the
// first: the merged report judges the whole), 0 all passed (skips allowed unless a device was required).
int run_suite(const RunOptions& opt);

bool glob_match(const std::string& pattern, const std::string& text);
bool case_selected(const std::vector<std::string>& filters, const std::string& id);

}  // namespace moe
