// Coverage (coverage.hpp): each case's row on a device by the set's lookup, and the device's rows no case reaches,
// on hand-placed rows whose outcomes the rules of docs/tuning.md state.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/tuning/coverage.hpp"

namespace moe {
namespace {

namespace fs = std::filesystem;

TEST(TableCoverage, EachCasesRowAndTheRowsNoCaseReaches) {
  const fs::path dir = fs::temp_directory_path() / ("moe_coverage_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "cover.yaml") << "suite: cover\ndefaults: {hidden: 256, inter: 256, experts: 16, topk: 4}\n"
                                       "cases:\n  - sweep: {tokens: [3, 4, 12]}\n  - {tokens: 4, experts: 32}\n";
  const Suite suite = load_suite_file(dir / "cover.yaml");
  ASSERT_EQ(suite.cases.size(), 4u);
  const CaseSpec& t4 = suite.cases[1];
  ASSERT_EQ(t4.problem.tokens, 4);
  // stock.csv lines 2-4: gfx942/80 at T1, T2, T4; any.csv lines 2-3: gfx942/0 at T4, T8.
  auto at = [&](int cu, int token) {
    TuningRow r = key_of(t4, "gfx942", cu);
    r.token = token;
    // the case the row was tuned on is the one at its token: tune writes it so, and the reader checks it
    const std::size_t at_t = r.case_id.find("/T4/");
    if (at_t != std::string::npos) r.case_id.replace(at_t, 4, "/T" + std::to_string(token) + "/");
    r.us = 1;
    return r;
  };
  write_tuning_table({"", {at(80, 1), at(80, 2), at(80, 4)}}, (dir / "stock.csv").string());
  write_tuning_table({"", {at(0, 4), at(0, 8)}}, (dir / "any.csv").string());
  const TableSet s = read_table_set({(dir / "stock.csv").string(), (dir / "any.csv").string()});
  const Coverage c = table_coverage(s, suite.cases, "gfx942", 80);
  ASSERT_EQ(c.cases.size(), 4u);
  auto row_of = [&](std::size_t i) { return c.cases[i].row ? fs::path(s.where(*c.cases[i].row)).filename().string() : "none"; };
  EXPECT_EQ(row_of(0), "stock.csv:3");  // T3: the power of two below, 2
  EXPECT_EQ(c.cases[0].rule, "power of two below");
  EXPECT_EQ(row_of(1), "stock.csv:4");  // T4: the exact-CU row over any.csv's cu_num 0 row at 4
  EXPECT_EQ(c.cases[1].rule, "exact");
  EXPECT_EQ(row_of(2), "any.csv:3");    // T12: 8, only at cu_num 0
  EXPECT_EQ(c.cases[2].rule, "any-CU row (cu_num=0), power of two below");
  EXPECT_EQ(row_of(3), "none");         // 32 experts: no row of its shape (the default heuristic)
  ASSERT_EQ(c.unreached.size(), 2u);
  EXPECT_EQ(fs::path(s.where(c.unreached[0])).filename().string(), "stock.csv:2");
  EXPECT_EQ(fs::path(s.where(c.unreached[1])).filename().string(), "any.csv:2");
  // On 304 CUs only the any-CU rows apply: T3 and T4 take any.csv:2 (smallest tier, exact).
  const Coverage other = table_coverage(s, suite.cases, "gfx942", 304);
  EXPECT_EQ(other.cases[0].rule, "any-CU row (cu_num=0), smallest tier");
  EXPECT_EQ(other.cases[1].rule, "any-CU row (cu_num=0), exact");
  fs::remove_all(dir);
}

TEST(TableCoverage, DevicesAreArchColonComputeUnits) {
  EXPECT_EQ(parse_table_device("gfx942:80", "--device"), (std::pair<std::string, int>{"gfx942", 80}));
  EXPECT_EQ(parse_table_device("sm_90:132", "--device"), (std::pair<std::string, int>{"sm_90", 132}));
  for (const char* bad : {"gfx942", "gfx942:", ":80", "gfx942:0", "gfx942:8x", "gfx942:-1"})
    EXPECT_THROW(parse_table_device(bad, "--device"), Error) << bad;
}

}  // namespace
}  // namespace moe
