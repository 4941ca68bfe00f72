// read_report: every field it reads is checked for presence and type, the error naming the file and the full key;
// null numbers (non-finite values, as the writer spells them) read back as NaN. The report below is written by hand
// from reports/schema/run_report.schema.json, not by the harness's writer.
#include "reports/report_reader.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fixtures/error.hpp"

namespace moe {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

Json valid_report() {
  Json c = {{"id", "case/a"}, {"kernel", "host-contract"}, {"status", "pass"}, {"reason", ""}, {"failed_check", ""},
            {"source", "s.yaml:3"}, {"variant", "loops"}, {"metrics", {{"min_cos", 0.999}, {"max_rel", 0.01}}},
            {"token_cos", {0.999, 1.0}}, {"token_rel", {0.01, 0.0}}, {"timing", {{"kernel_us", 0}, {"reference_s", 0}}},
            {"fixture_fingerprint", "0123456789abcdef"}, {"details", ""}};
  Json dev = {{"name", ""}, {"vendor", ""}, {"arch", ""}, {"compute_units", 0}, {"driver_version", ""},
              {"runtime_version", ""}, {"message", "no GPU"}};
  Json prov = {{"harness_version", "0.1.0"}, {"harness_commit", "abc"}, {"kernels", {{{"id", "host-contract"}, {"version", "1"}}}},
               {"device", dev}, {"suite", "smoke"}, {"suite_file", "s.yaml"}, {"suite_hash", "0123456789abcdef"},
               {"seed", "case"}, {"start_time", "2026-12-01T00:00:00Z"}, {"end_time", "2026-12-01T00:00:01Z"}, {"host", "h"}};
  return {{"schema_version", 1}, {"provenance", prov},
          {"summary", {{"total", 1}, {"pass", 1}, {"fail", 0}, {"skip", 0}, {"error", 0}}}, {"cases", {c}}};
}

class ReportReader : public ::testing::Test {
 protected:
  fs::path path = fs::temp_directory_path() / ("moe_rr_" + std::to_string(::getpid()) + "_" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json");
  void TearDown() override { fs::remove(path); }
  ReadReport read(const Json& j) {
    std::ofstream(path) << j.dump();
    return read_report(path);
  }
  // The error for a report: bad input, naming the file, with `key` as its key.
  void expect_bad_key(const Json& j, const std::string& key, const std::string& what) {
    try {
      read(j);
      ADD_FAILURE() << what << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input) << what << ": " << e.what();
      EXPECT_EQ(e.where(), path.string()) << what;
      EXPECT_EQ(e.key(), key) << what << ": " << e.what();
    }
  }
};

TEST_F(ReportReader, ReadsTheFields) {
  const ReadReport r = read(valid_report());
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.suite, "smoke");
  EXPECT_EQ(r.kernels, std::vector<std::string>{"host-contract 1"});
  EXPECT_EQ(r.cases[0].id, "case/a");
  EXPECT_EQ(r.cases[0].metrics.at("min_cos"), 0.999);
  EXPECT_EQ(r.cases[0].token_rel, (std::vector<double>{0.01, 0.0}));
}

// Non-finite numbers are written as null; they read back as NaN, in metrics and in the per-token arrays.
TEST_F(ReportReader, NullReadsAsNaN) {
  Json j = valid_report();
  j["cases"][0]["metrics"]["max_rel"] = nullptr;
  j["cases"][0]["token_cos"][1] = nullptr;
  j["cases"][0]["token_rel"][0] = nullptr;
  const ReadReport r = read(j);
  EXPECT_TRUE(std::isnan(r.cases[0].metrics.at("max_rel")));
  EXPECT_EQ(r.cases[0].metrics.at("min_cos"), 0.999);
  EXPECT_EQ(r.cases[0].token_cos[0], 0.999);
  EXPECT_TRUE(std::isnan(r.cases[0].token_cos[1]));
  EXPECT_TRUE(std::isnan(r.cases[0].token_rel[0]));
}

// Every field the reader uses, removed and then given the wrong type: each is bad input naming its key.
TEST_F(ReportReader, EveryFieldMissingOrMistyped) {
  const std::vector<std::pair<std::string, std::string>> fields = {  // JSON pointer, key in the error
      {"/provenance", "provenance"},
      {"/provenance/suite", "provenance.suite"},
      {"/provenance/harness_commit", "provenance.harness_commit"},
      {"/provenance/start_time", "provenance.start_time"},
      {"/provenance/end_time", "provenance.end_time"},
      {"/provenance/device", "provenance.device"},
      {"/provenance/device/arch", "provenance.device.arch"},
      {"/provenance/device/name", "provenance.device.name"},
      {"/provenance/device/message", "provenance.device.message"},
      {"/provenance/kernels", "provenance.kernels"},
      {"/provenance/kernels/0/id", "provenance.kernels[0].id"},
      {"/provenance/kernels/0/version", "provenance.kernels[0].version"},
      {"/cases", "cases"},
      {"/cases/0/id", "cases[0].id"},
      {"/cases/0/kernel", "cases[0].kernel"},
      {"/cases/0/status", "cases[0].status"},
      {"/cases/0/reason", "cases[0].reason"},
      {"/cases/0/variant", "cases[0].variant"},
      {"/cases/0/failed_check", "cases[0].failed_check"},
      {"/cases/0/details", "cases[0].details"},
      {"/cases/0/metrics", "cases[0].metrics"},
      {"/cases/0/token_cos", "cases[0].token_cos"},
      {"/cases/0/token_rel", "cases[0].token_rel"},
  };
  for (const auto& [pointer, key] : fields) {
    const Json::json_pointer ptr(pointer);
    Json missing = valid_report();
    missing.at(ptr.parent_pointer()).erase(ptr.back());
    expect_bad_key(missing, key, "missing " + pointer);
    Json mistyped = valid_report();
    // A string where an object or array is wanted, an array where a string is wanted.
    mistyped.at(ptr) = mistyped.at(ptr).is_string() ? Json::array({1}) : Json("text");
    expect_bad_key(mistyped, key, "mistyped " + pointer);
  }
  // Elements: a case or kernel entry that is not an object, a metric or token value that is not a number or null.
  for (const auto& [pointer, key] : std::vector<std::pair<std::string, std::string>>{
           {"/cases/0", "cases[0]"}, {"/provenance/kernels/0", "provenance.kernels[0]"},
           {"/cases/0/metrics/min_cos", "cases[0].metrics.min_cos"}, {"/cases/0/token_cos/1", "cases[0].token_cos[1]"},
           {"/cases/0/token_rel/0", "cases[0].token_rel[0]"}}) {
    Json j = valid_report();
    j.at(Json::json_pointer(pointer)) = "text";
    expect_bad_key(j, key, "mistyped " + pointer);
  }
}

TEST_F(ReportReader, StatusAndIdsAreChecked) {
  Json j = valid_report();
  j["cases"][0]["status"] = "passed";
  expect_bad_key(j, "cases[0].status", "unknown status");
  j = valid_report();
  j["cases"][0]["failed_check"] = "min_coss";
  expect_bad_key(j, "cases[0].failed_check", "unknown check");
  j = valid_report();
  j["cases"][0]["kernel"] = "";
  expect_bad_key(j, "cases[0].kernel", "empty kernel");
  j = valid_report();
  j["schema_version"] = "1";
  expect_bad_key(j, "schema_version", "schema_version as a string");
  j = valid_report();
  j.erase("schema_version");
  expect_bad_key(j, "schema_version", "no schema_version");
}

// A document nested far deeper than a report is refused as bad input (not parsed into memory, not a crash).
TEST_F(ReportReader, DeepNestingIsBadInput) {
  std::ofstream(path) << "{\"schema_version\": 1, \"x\": " << std::string(100000, '[') << std::string(100000, ']') << "}";
  try {
    read_report(path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input) << e.what();
    EXPECT_NE(std::string(e.what()).find("nested deeper"), std::string::npos) << e.what();
  }
}

// Brackets inside strings (an escaped quote among them) are text, not nesting: a report whose details hold 100
// of them reads as before.
TEST_F(ReportReader, BracketsInStringsAreNotNesting) {
  nlohmann::ordered_json j = valid_report();
  j["cases"][0]["details"] = "\\\"" + std::string(100, '[') + "\"{";
  std::ofstream(path) << j.dump();
  const ReadReport r = read_report(path);
  ASSERT_EQ(r.cases.size(), j["cases"].size());
  EXPECT_EQ(r.cases[0].details, j["cases"][0]["details"].get<std::string>());
}

}  // namespace moe

namespace moe {
// The systematic statistics read back field for field (a null z or effect as NaN: a statistic that did not run);
// a report written before them has none, and a malformed one is bad input naming its key.
TEST_F(ReportReader, SystematicStatisticsReadBackAndAreOptional) {
  EXPECT_TRUE(read(valid_report()).cases[0].systematic.empty());
  Json j = valid_report();
  j["cases"][0]["systematic"] = {
      {"gain", {{"status", "ran"}, {"z", 812.5}, {"z_threshold", 6}, {"effect", 0.03}, {"effect_floor", 1e-3},
                {"at", ""}, {"failed", true}}},
      {"expert", {{"status", "not run: one token: no other tokens to compare an expert's tokens with"}, {"z", nullptr},
                  {"z_threshold", 6}, {"effect", nullptr}, {"effect_floor", 2e-3}, {"at", ""}, {"failed", false}}}};
  const auto s = read(j).cases[0].systematic;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "gain");
  EXPECT_EQ(s[0].status, "ran");
  EXPECT_DOUBLE_EQ(s[0].z, 812.5);
  EXPECT_DOUBLE_EQ(s[0].effect_floor, 1e-3);
  EXPECT_TRUE(s[0].failed);
  EXPECT_EQ(s[1].name, "expert");
  EXPECT_TRUE(std::isnan(s[1].z) && std::isnan(s[1].effect));
  EXPECT_FALSE(s[1].ran());
  j["cases"][0]["systematic"]["gain"].erase("failed");
  expect_bad_key(j, "cases[0].systematic.gain.failed", "no failed flag");
  j["cases"][0]["systematic"]["gain"]["failed"] = true;
  j["cases"][0]["systematic"]["gain"]["z"] = "big";
  expect_bad_key(j, "cases[0].systematic.gain.z", "z a string");
}
}  // namespace moe
