// JUnit XML from run records, for reports rebuilt without GoogleTest (`moe-harness report DIR` on the journal of a
// killed run). A live run's junit.xml comes from GoogleTest; this writes the same shape and names: one <testsuite>
// per kernel, one <testcase name=gtest_test_name(CASE) classname=gtest_test_name(KERNEL)> per record, <failure> for
// fail and error, <skipped> with the reason, the metrics, variant and verdict as properties.
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
