// The export index (harness/batch/export_index.hpp): case directory names against docs/export.md's rule written out by
// hand, and index.json read back field for field or refused naming the key.
#include "harness/batch/export_index.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

#include "fixtures/error.hpp"

namespace moe {
namespace {

TEST(ExportIndex, CaseDirNameSpellsTheDocumentedExample) {
  EXPECT_EQ(case_dir_name("custom-h256i256e16k4-softmax_topk/tp1/bf16.a16/silu/T3/decode/atomic"),
            "custom-h256i256e16k4-softmax_topk~tp1~bf16.a16~silu~T3~decode~atomic");  // `_` kept as it is
  EXPECT_EQ(case_dir_name("a+b,c=d-e.f_g"), "a+b,c=d-e.f_g");  // kept as they are
  EXPECT_EQ(case_dir_name("x~y%z /:"), "x%7ey%25z%20~%3a");  // '~' and '%' escaped: the spelling decodes back
  EXPECT_EQ(case_dir_name("a/b"), "a~b");
  EXPECT_EQ(case_dir_name(".."), "%2e.");  // never "." or ".." or a hidden name
  EXPECT_EQ(case_dir_name(""), "%2e");
}

TEST(ExportIndex, CaseDirNamesOfDistinctIdsDiffer) {
  // Ids that a lossy spelling ('/' and '_' both as '_', say) would merge.
  const std::set<std::string> names = {case_dir_name("a/b"), case_dir_name("a_b"), case_dir_name("a~b"),
                                       case_dir_name("a%7eb"), case_dir_name("a%2fb")};
  EXPECT_EQ(names.size(), 5u);
}

TEST(ExportIndex, LongIdsAreCutAndKeyedByTheirHash) {
  const std::string a(300, 'a'), b = std::string(299, 'a') + "b";
  const std::string na = case_dir_name(a), nb = case_dir_name(b);
  EXPECT_EQ(na.size(), kMaxCaseDirName);
  EXPECT_EQ(na.substr(0, kMaxCaseDirName - 17), std::string(kMaxCaseDirName - 17, 'a'));
  EXPECT_EQ(na[kMaxCaseDirName - 17], '#');
  EXPECT_NE(na, nb);  // same first 183 bytes, other hash
  EXPECT_EQ(case_dir_name(std::string(kMaxCaseDirName, 'a')), std::string(kMaxCaseDirName, 'a'));  // not cut
}

class IndexFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("moe-export-index-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& text) { std::ofstream(dir_ / kExportIndexFile) << text; }
  // The key the bad-input error names.
  std::string refused_key() {
    try {
      read_export_index(dir_);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      return e.key();
    }
    return "(accepted)";
  }
  std::filesystem::path dir_;
};

TEST_F(IndexFile, RoundTrips) {
  ExportIndex x;
  x.suite = "smoke";
  x.suite_file = "/s/smoke.yaml";
  x.suite_hash = 0x0123456789abcdefULL;
  x.filters = {"*T3*", "-*per_k*"};
  x.harness = "abc+dirty.def";
  x.reference_version = "feed";
  ExportEntry e;
  e.id = "a/b_c";
  e.exported = true;
  e.dir = case_dir_name(e.id);
  e.fixture_fingerprint = 0xfedcba9876543210ULL;
  e.reference_hash = 1;
  e.reference_key = "a/b_c|ref=feed|case=0|contract=default|fixture=fedcba9876543210";
  ExportEntry n;
  n.id = "big";
  n.reason = "tensor w13: out of host memory";
  n.failed_check = Check::harness_error;
  ExportEntry b;
  b.id = "floored";
  b.reason = "s.yaml:4: key 'quant.amax_floor': the activation amax floor 9e+29 rounds every activation to 0";
  b.failed_check = Check::bad_input;
  x.cases = {e, n, b};
  write(export_index_json(x));
  const ExportIndex y = read_export_index(dir_);
  EXPECT_EQ(y.suite, "smoke");
  EXPECT_EQ(y.suite_file, "/s/smoke.yaml");
  EXPECT_EQ(y.suite_hash, 0x0123456789abcdefULL);
  EXPECT_EQ(y.filters, x.filters);
  EXPECT_EQ(y.harness, x.harness);
  EXPECT_EQ(y.reference_version, "feed");
  ASSERT_EQ(y.cases.size(), 3u);
  EXPECT_TRUE(y.cases[0].exported);
  EXPECT_EQ(y.cases[0].dir, "a~b_c");
  EXPECT_EQ(y.cases[0].fixture_fingerprint, 0xfedcba9876543210ULL);
  EXPECT_EQ(y.cases[0].reference_hash, 1u);
  EXPECT_EQ(y.cases[0].reference_key, e.reference_key);
  EXPECT_FALSE(y.cases[1].exported);
  EXPECT_EQ(y.cases[1].reason, n.reason);
  EXPECT_EQ(y.cases[1].failed_check, Check::harness_error);
  EXPECT_FALSE(y.cases[2].exported);
  EXPECT_EQ(y.cases[2].reason, b.reason);
  EXPECT_EQ(y.cases[2].failed_check, Check::bad_input);
}

TEST_F(IndexFile, RefusesWhatIsMissingOrMalformedNamingTheKey) {
  EXPECT_EQ(refused_key(), kExportIndexFile);  // no index: an empty directory
  write("{");
  EXPECT_EQ(refused_key(), "(file)");
  const std::string head = R"({"index_version": 2, "suite": "s", "suite_file": "/s", "suite_hash": "0000000000000000",
                              "filters": [], "harness": "h", "reference_version": "r", "cases": [)";
  write(R"({"index_version": 1})");  // before failed_check: export the suite again
  EXPECT_EQ(refused_key(), "index_version");
  write(R"({"index_version": 3})");
  EXPECT_EQ(refused_key(), "index_version");
  write(head + R"({"id": "a", "exported": true, "dir": "../a", "fixture_fingerprint": "0000000000000000",
                   "reference_hash": "0000000000000000", "reference_key": "k"}]})");
  EXPECT_EQ(refused_key(), "cases[0].dir");  // never a path out of the directory
  write(head + R"({"id": "a", "exported": true, "dir": "a", "fixture_fingerprint": "xyz",
                   "reference_hash": "0000000000000000", "reference_key": "k"}]})");
  EXPECT_EQ(refused_key(), "cases[0].fixture_fingerprint");
  write(head + R"({"id": "a", "exported": false}]})");
  EXPECT_EQ(refused_key(), "cases[0].reason");
  // Why a case was not exported: bad_input or harness_error, nothing else (a verdict, or none, is no reason).
  write(head + R"({"id": "a", "exported": false, "reason": "r"}]})");
  EXPECT_EQ(refused_key(), "cases[0].failed_check");
  for (const char* check : {"\"crash\"", "\"\"", "\"min_cos\"", "\"Bad_Input\"", "true", "2"}) {
    write(head + R"({"id": "a", "exported": false, "reason": "r", "failed_check": )" + check + "}]}");
    EXPECT_EQ(refused_key(), "cases[0].failed_check") << check;
  }
  write(head + R"({"id": "a", "exported": false, "reason": "r", "failed_check": "bad_input"}]})");
  EXPECT_EQ(refused_key(), "(accepted)");
  // A key the index does not define is refused where it stands (as the journal refuses one), in either kind of entry
  // and at the top; a key of the other kind of entry is unknown too.
  write(head + R"({"id": "a", "exported": false, "reason": "r", "failed_check": "bad_input", "note": 1}]})");
  EXPECT_EQ(refused_key(), "cases[0].note");
  write(head + R"({"id": "a", "exported": false, "reason": "r", "failed_check": "bad_input", "dir": "a"}]})");
  EXPECT_EQ(refused_key(), "cases[0].dir");
  write(head + R"({"id": "a", "exported": true, "dir": "a", "fixture_fingerprint": "0000000000000000",
                   "reference_hash": "0000000000000000", "reference_key": "k", "reason": "r"}]})");
  EXPECT_EQ(refused_key(), "cases[0].reason");
  write(R"({"index_version": 2, "suite": "s", "suite_file": "/s", "suite_hash": "0000000000000000", "filters": [],
           "harness": "h", "reference_version": "r", "cases": [], "suite_hash2": "0000000000000000"})");
  EXPECT_EQ(refused_key(), "suite_hash2");
}

}  // namespace
}  // namespace moe
