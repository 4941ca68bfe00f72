// JUnit XML from run records: every junit.xml the harness writes (run, `report DIR`, judge --dir, the Python
// Session). One <testsuite> per kernel, one <testcase name=CASE-ID classname=KERNEL-ID> per record (the ids as the
// reports spell them), <failure> for fail with the reason and the verdict's details (check, metrics, worst tokens,
// statistics), <error> for a harness error, <skipped> with the reason, the metrics, variant and verdict as
// properties. An incomplete run's unjudged tests are <error>s saying NOT JUDGED and why (RunReport::unjudged).
#pragma once
#include <string>

#include "reports/run_report.hpp"

namespace moe {

std::string to_junit_xml(const RunReport& r);

// A GoogleTest name for an id: '-' and ':' become '_'. GoogleTest's filter reads the first '-' as the start of the
// negative patterns and ':' as a separator, so a name holding either could not be selected (`--gtest_filter=
// host-contract.*` selects nothing). `run` registers every (case, kernel) as gtest_test_name(kernel id) .
// gtest_test_name(case id) (harness/run/runner.hpp); two tests whose names collide are refused at registration.
std::string gtest_test_name(const std::string& id);

}  // namespace moe
