// compare_reports on reports built here: NaN never passes a comparison, a vanished skip is no regression, other
// fixtures are a finding, --kernel selects, and findings come ranked with new failures first.
#include "reports/drift.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace moe {
namespace {

ReportCase passing(const std::string& id, const std::string& kernel = "host-contract") {
  ReportCase c;
  c.id = id;
  c.kernel = kernel;
  c.status = Status::pass;
  c.variant = "host/atomic";
  c.metrics = {{"min_cos", 0.99999}, {"max_rel", 3e-3}, {"max_abs", 1e-2}, {"threshold_min_cos", 0.9999},
               {"threshold_max_rel", 0.012}, {"kernel_us", 10.0}};
  c.token_cos = {0.99999, 0.999995, 0.99999};
  c.token_rel = {3e-3, 2e-3, 3e-3};
  c.fixture_fingerprint = "3ca3276da66cf7cf";
  return c;
}

ReadReport report(std::vector<ReportCase> cases) {
  ReadReport r;
  r.file = "r.json";
  r.cases = std::move(cases);
  return r;
}

std::vector<std::string> kinds(const std::vector<DriftFinding>& f) {
  std::vector<std::string> k;
  for (const auto& d : f) k.push_back(d.kind);
  return k;
}

bool has(const std::vector<DriftFinding>& f, const std::string& kind) {
  return std::any_of(f.begin(), f.end(), [&](const DriftFinding& d) { return d.kind == kind; });
}

const DriftMargins kM{};

TEST(Drift, IdenticalReportsHaveNoFinding) {
  const ReadReport b = report({passing("a"), passing("b")});
  EXPECT_TRUE(compare_reports(b, b, kM).empty());
}

// NaN compares false with everything: `base - NaN > margin` is false, so a NaN metric or token would pass silently.
TEST(Drift, NanMinCosInTheNewReportIsAFailingFinding) {
  const ReadReport b = report({passing("a")});
  ReadReport n = b;
  n.cases[0].metrics["min_cos"] = NAN;
  const auto f = compare_reports(b, n, kM);
  EXPECT_TRUE(has(f, "non_finite")) << ::testing::PrintToString(kinds(f));
  EXPECT_EQ(drift_failures(f), int(f.size()));
  EXPECT_GE(drift_failures(f), 1);
}

TEST(Drift, NanMaxRelInTheNewReportIsAFailingFinding) {
  const ReadReport b = report({passing("a")});
  ReadReport n = b;
  n.cases[0].metrics["max_rel"] = NAN;
  const auto f = compare_reports(b, n, kM);
  EXPECT_TRUE(has(f, "non_finite")) << ::testing::PrintToString(kinds(f));
  EXPECT_GE(drift_failures(f), 1);
}

TEST(Drift, NanTokenCosOrRelInTheNewReportIsAFailingFinding) {
  const ReadReport b = report({passing("a")});
  for (int which = 0; which < 2; ++which) {
    ReadReport n = b;
    (which == 0 ? n.cases[0].token_cos : n.cases[0].token_rel)[1] = NAN;
    const auto f = compare_reports(b, n, kM);
    EXPECT_TRUE(has(f, "non_finite")) << which << ": " << ::testing::PrintToString(kinds(f));
    EXPECT_GE(drift_failures(f), 1) << which;
  }
}

TEST(Drift, NanInAnyVerdictMetricOfAPassingNewCaseIsAFinding) {
  const ReadReport b = report({passing("a")});
  ReadReport n = b;
  n.cases[0].metrics["max_abs"] = NAN;
  EXPECT_TRUE(has(compare_reports(b, n, kM), "non_finite"));
}

TEST(Drift, NanInTheBaseCannotBeComparedAndSaysSo) {
  ReadReport b = report({passing("a")});
  const ReadReport n = b;
  b.cases[0].metrics["min_cos"] = NAN;
  const auto f = compare_reports(b, n, kM);
  EXPECT_TRUE(has(f, "non_finite")) << ::testing::PrintToString(kinds(f));
  EXPECT_GE(drift_failures(f), 1);
}

// An absent metric is no better than a NaN one: the comparison cannot be made.
TEST(Drift, AbsentMaxRelInTheNewReportIsAFinding) {
  const ReadReport b = report({passing("a")});
  ReadReport n = b;
  n.cases[0].metrics.erase("max_rel");
  EXPECT_GE(drift_failures(compare_reports(b, n, kM)), 1);
}

TEST(Drift, ADifferentTokenCountIsAFinding) {
  const ReadReport b = report({passing("a")});
  ReadReport n = b;
  n.cases[0].token_cos.pop_back();
  n.cases[0].token_rel.pop_back();
  EXPECT_GE(drift_failures(compare_reports(b, n, kM)), 1);
}

TEST(Drift, ACaseTheBaseSkippedAndTheNewRunLacksIsNoRegression) {
  ReportCase s = passing("gone");
  s.status = Status::skip;
  s.reason = "no GPU here";
  s.metrics.clear();
  s.token_cos.clear();
  s.token_rel.clear();
  const ReadReport b = report({passing("a"), s});
  const ReadReport n = report({passing("a")});
  const auto f = compare_reports(b, n, kM);
  EXPECT_EQ(drift_failures(f), 0) << ::testing::PrintToString(kinds(f));
}

TEST(Drift, APassingCaseTheNewRunLacksIsStillMissing) {
  const ReadReport b = report({passing("a"), passing("b")});
  const ReadReport n = report({passing("a")});
  const auto f = compare_reports(b, n, kM);
  EXPECT_TRUE(has(f, "missing"));
  EXPECT_EQ(drift_failures(f), 1);
}

TEST(Drift, AnotherFixtureFingerprintIsAFailingFinding) {
  const ReadReport b = report({passing("a")});
  ReadReport n = b;
  n.cases[0].fixture_fingerprint = "0123456789abcdef";
  const auto f = compare_reports(b, n, kM);
  ASSERT_TRUE(has(f, "fixture")) << ::testing::PrintToString(kinds(f));
  EXPECT_EQ(drift_failures(f), 1);
  EXPECT_NE(f[0].detail.find("0123456789abcdef"), std::string::npos) << f[0].detail;
}

TEST(Drift, AnotherRoundingContractIsAFailingFinding) {
  ReportCase c = passing("a");
  c.contract.effective = "default";
  c.contract.source = "default";
  const ReadReport b = report({c});
  ReadReport n = b;
  n.cases[0].contract.effective = "gate_up=bf16,slot=bf16";
  n.cases[0].contract.source = "kernel";
  const auto f = compare_reports(b, n, kM);
  ASSERT_EQ(kinds(f), std::vector<std::string>{"contract"});
  EXPECT_EQ(drift_failures(f), 1);
  EXPECT_NE(f[0].detail.find("default (default) -> gate_up=bf16,slot=bf16 (kernel)"), std::string::npos) << f[0].detail;
  // A report written before contracts carries none: no finding.
  ReadReport old = b;
  old.cases[0].contract = {};
  EXPECT_TRUE(compare_reports(old, n, kM).empty());
}

TEST(Drift, SkippedCasesCarryNoFingerprintAndAreNotFlaggedForIt) {
  ReportCase s = passing("a");
  s.status = Status::skip;
  s.fixture_fingerprint = "0000000000000000";
  s.metrics.clear();
  const ReadReport b = report({s});
  EXPECT_TRUE(compare_reports(b, b, kM).empty());
}

TEST(Drift, KernelSelectionComparesOnlyThatKernel) {
  const ReadReport b = report({passing("a", "host-contract"), passing("a", "gpu-fused-moe")});
  ReadReport n = b;
  n.cases[1].status = Status::fail;  // the GPU kernel regressed
  EXPECT_EQ(drift_failures(compare_reports(b, n, kM, {"host-contract"})), 0);
  EXPECT_EQ(drift_failures(compare_reports(b, n, kM, {"gpu-fused-moe"})), 1);
  EXPECT_EQ(drift_failures(compare_reports(b, n, kM)), 1);
}

TEST(Drift, FindingsAreRankedNewFailuresFirstNewCasesLast) {
  // In report order: a variant change, a drop of min cos, then a new failure, a new case.
  const ReadReport b = report({passing("v"), passing("c"), passing("f")});
  ReadReport n = b;
  n.cases[0].variant = "other/path";
  n.cases[1].metrics["min_cos"] = 0.9995;
  n.cases[2].status = Status::fail;
  n.cases[2].reason = "min_cos: 0.9 < 0.9999";
  n.cases.push_back(passing("added"));
  const auto f = compare_reports(b, n, kM);
  ASSERT_EQ(f.size(), 4u) << ::testing::PrintToString(kinds(f));
  EXPECT_EQ(f.front().kind, "status");
  EXPECT_EQ(f.front().id, "f");
  EXPECT_TRUE(f.front().new_failure);
  EXPECT_EQ(f.back().kind, "new");
  EXPECT_FALSE(f.back().fails);
  EXPECT_EQ(drift_failures(f), 3);
}

}  // namespace
}  // namespace moe
