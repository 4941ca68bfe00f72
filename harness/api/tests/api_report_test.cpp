// The API's reports: provenance, the four report files from records, and report.json read back.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <moe_harness/moe_harness.hpp>
#include <sstream>

namespace api = moe::api;

namespace {
std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST(ApiReport, ProvenanceNamesTheBuildKernelsSuiteAndSeed) {
  const api::Suite s = api::load_suite("smoke");
  const api::Provenance p = api::make_provenance(s, {{"mine", "1.2"}, {"torch", "2.11"}}, api::DeviceDetection{});
  EXPECT_EQ(p.harness_version, MOE_PROJECT_VERSION);  // CMake's project(VERSION)
  EXPECT_EQ(api::version(), MOE_PROJECT_VERSION);
  EXPECT_EQ(p.harness_commit, api::build_stamp());
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[1].first, "torch");
  EXPECT_EQ(p.suite, "smoke");
  EXPECT_EQ(p.suite_file, s.file);
  EXPECT_EQ(p.seed, "case");
  EXPECT_EQ(p.start_time.size(), std::string("2026-12-01T12:00:00Z").size()) << p.start_time;
  EXPECT_EQ(api::make_provenance(s, {}, {}, 7).seed, "7");
}

TEST(ApiReport, ReportsOfRecordsRoundTripThroughTheReader) {
  const api::Suite s = api::load_suite("smoke");
  ASSERT_GE(s.cases.size(), 2u);
  const auto host = api::make_kernel("host");
  api::RunReport report;
  report.provenance = api::make_provenance(s, {{host->id(), host->version()}}, {});
  report.cases.push_back(api::run_case(s.cases[0], *host, {}));
  api::CaseSpec other = s.cases[1];
  other.kernels = {"gpu-fused-moe"};  // a skip
  report.cases.push_back(api::run_case(other, *host, {}));
  report.provenance.end_time = api::utc_now();
  const auto dir = std::filesystem::path(::testing::TempDir()) / "api-reports";
  std::filesystem::remove_all(dir);
  const api::ReportFiles f = api::write_reports(report, dir);
  EXPECT_EQ(f.json, dir / "report.json");
  const api::ReadReport back = api::read_report(f.json);
  ASSERT_EQ(back.cases.size(), 2u);
  EXPECT_EQ(back.suite, "smoke");
  EXPECT_EQ(back.cases[0].id, s.cases[0].id);
  EXPECT_EQ(back.cases[0].status, api::Status::pass);
  EXPECT_EQ(back.cases[0].metrics.at("min_cos"), report.cases[0].metrics.at("min_cos"));
  EXPECT_EQ(back.cases[0].token_cos, report.cases[0].token_cos);
  EXPECT_EQ(back.cases[1].status, api::Status::skip);
  EXPECT_EQ(back.cases[1].reason, report.cases[1].reason);
  const std::string junit = slurp(f.junit);
  EXPECT_NE(junit.find("<testsuite name=\"host-contract\""), std::string::npos) << junit.substr(0, 400);
  EXPECT_NE(junit.find("<skipped"), std::string::npos);
  EXPECT_NE(slurp(f.markdown).find(s.cases[0].id), std::string::npos);
  EXPECT_NE(slurp(f.html).find("<html"), std::string::npos);
}
