// junit.xml from run records (reports/junit_report.hpp): an incomplete run's tests that got no record are errors,
// each named, with the reason, so a CI gate reading junit.xml sees them as errors, not skips and 0 failures.
#include "reports/junit_report.hpp"

#include <gtest/gtest.h>

namespace moe {
namespace {

CaseRecord passed(const std::string& id) {
  CaseRecord r;
  r.id = id;
  r.kernel = "host-contract";
  r.status = Status::pass;
  r.source = "cases/x.yaml:7";
  return r;
}

// An incomplete run's tests that got no record are errors, each named, with the reason: a CI gate reading junit.xml
// sees 2 errors, not 2 skips and 0 failures. A rebuilt report that knows only that the run is incomplete has one
// error test saying so.
TEST(JunitFromRecords, UnjudgedTestsOfAnIncompleteRunAreErrors) {
  RunReport r;
  r.cases = {passed("custom/T3/decode")};
  r.provenance.incomplete = true;
  r.provenance.incomplete_reason = "interrupted by SIGTERM: 1 of the 3 selected test(s) judged";
  r.unjudged = {{"host-contract", "custom/T3/prefill"}, {"host-contract", "custom/T9/decode"}};
  const std::string x = to_junit_xml(r);
  EXPECT_NE(x.find(R"(<testsuites tests="3" failures="0" skipped="0" disabled="0" errors="2")"), std::string::npos) << x;
  EXPECT_NE(x.find(R"(<testsuite name="host-contract" tests="3" failures="0" skipped="0" disabled="0" errors="2">)"),
            std::string::npos) << x;
  EXPECT_NE(x.find(R"(<testcase name="custom/T9/decode" status="notrun" result="interrupted" classname="host-contract">)"
                   "\n"
                   R"(      <error message="NOT JUDGED: interrupted by SIGTERM: 1 of the 3 selected test(s) judged")"),
            std::string::npos) << x;
  EXPECT_EQ(x.find("<skipped"), std::string::npos) << x;
  r.unjudged.clear();
  const std::string rebuilt = to_junit_xml(r);
  EXPECT_NE(rebuilt.find(R"(<testsuites tests="2" failures="0" skipped="0" disabled="0" errors="1")"), std::string::npos)
      << rebuilt;
  EXPECT_NE(rebuilt.find(R"(<error message="NOT JUDGED: interrupted by SIGTERM)"), std::string::npos) << rebuilt;
  r.provenance.incomplete = false;
  EXPECT_EQ(to_junit_xml(r).find("NOT JUDGED"), std::string::npos);
}

}  // namespace
}  // namespace moe
