// JUnit XML from run records, for reports rebuilt without GoogleTest (`moe-harness report DIR` on the journal of a
// killed run). A live run's junit.xml comes from GoogleTest; this writes the same shape: one <testsuite> per
// kernel, one <testcase name=CASE classname=KERNEL> per record, <failure> for fail and error, <skipped> with the
// reason, the metrics, variant and verdict as properties.
#pragma once
#include <string>

#include "reports/run_report.hpp"

namespace moe {

std::string to_junit_xml(const RunReport& r);

}  // namespace moe
