// Table sets (table_set.hpp, docs/tuning.md "Table sets") on hand-written stock + overlay tables in AITER's columns:
// each rule's outcome is the one the rule states for these rows, line by line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fixtures/error.hpp"
#include "harness/tuning/set_checks.hpp"
#include "harness/tuning/table_file.hpp"
#include "harness/tuning/table_set.hpp"

namespace moe {
namespace {

namespace fs = std::filesystem;

const char* kAiterHeader =
    "gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,"
    "doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,us,run_1stage,tflops,bw,_tag";

// One AITER row of the gfx942 small-token signature (H 2048, local I 128, E 256, topk 8, per-token FP8).
std::string aiter(int cu, int token, const std::string& kernel, const std::string& us, const std::string& tag = "",
                  const std::string& kernel2 = "Null") {
  return "gfx942," + std::to_string(cu) + "," + std::to_string(token) +
         ",2048,128,256,8,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fnuz,torch.float8_e4m3fnuz,"
         "QuantType.per_Token,1,0,32,0," + us + "," + kernel + ",0.1%,0," + kernel2 + ",0.25%," + us + ",1,0,0," + tag;
}

struct Dir {
  fs::path path = fs::temp_directory_path() / ("moe_table_set_test_" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::vector<std::string>& lines) const {
    std::ofstream f(path / name);
    for (const std::string& l : lines) f << l << "\n";
    return (path / name).string();
  }
};

// stock.csv                                  overlay.csv
//  2: cu 80, T16  stockA                      2: cu 80, T16  overlayA   same key as stock:2      -> overrides it
//                                                (stock:3, cu 0, is shadowed on 80 CUs by stock:2 already: no override)
//  3: cu 0,  T16  stockAny                    3: cu 80, T32  overlayB   stock:4 is tagged        -> no override
//  4: cu 80, T32  tagged 'untuned'            4: cu 80, T64  overlayC   over stock:5's cu 0 row  -> shadows it on 80
//  5: cu 0,  T64  stockAny64                  5: cu 80, T128 tagged 'exp' (stock:6's key)    -> no override
//  6: cu 80, T128 stockB
//  7: cu 80, T128 tagged 'candidate' (stock:6's key: not a duplicate)
struct StockOverlay : Dir {
  std::string stock = write("stock.csv", {kAiterHeader, aiter(80, 16, "stockA", "10"), aiter(0, 16, "stockAny", "11"),
                                          aiter(80, 32, "stockTagged", "12", "untuned"),
                                          aiter(0, 64, "stockAny64", "13"), aiter(80, 128, "stockB", "14"),
                                          aiter(80, 128, "stockCandidate", "15", "candidate")});
  std::string overlay = write("overlay.csv", {kAiterHeader, aiter(80, 16, "overlayA", "9"),
                                              aiter(80, 32, "overlayB", "8"), aiter(80, 64, "overlayC", "7"),
                                              aiter(80, 128, "overlayTagged", "6", "exp")});
};

std::string where(const TableSet& s, RowRef r) { return s.where(r); }

// The key of the signature at `token` tokens on gfx942 with `cu` compute units.
TuningRow key(const TableSet& s, int cu, int token) {
  TuningRow k = s.tables[0].rows[0];
  k.cu_num = cu;
  k.token = token;
  return k;
}

std::string looked_up(const TableSet& s, int cu, int token, std::string* rule = nullptr) {
  const auto l = lookup_in_set(s, key(s, cu, token));
  if (!l) return "none";
  if (rule) *rule = l->rule;
  return fs::path(s.where(l->ref)).filename().string();
}

int defects(const TableSet& s) { return s.defects(); }

bool has(const std::vector<SetFinding>& f, const std::string& where_suffix, const std::string& text, bool defect) {
  for (const SetFinding& x : f)
    if (x.where.size() >= where_suffix.size() &&
        x.where.compare(x.where.size() - where_suffix.size(), where_suffix.size(), where_suffix) == 0 &&
        x.message.find(text) != std::string::npos && x.defect == defect)
      return true;
  return false;
}

TEST(TableSet, ReadsAiterColumns) {
  Dir d;
  const std::string f = d.write("a.csv", {kAiterHeader, aiter(80, 16, "k1", "10.5"), aiter(0, 1, "k1", "3", "", "k2")});
  const TuningTable t = read_table_file(f);
  ASSERT_TRUE(t.aiter);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].gfx, "gfx942");
  EXPECT_EQ(t.rows[0].cu_num, 80);
  EXPECT_EQ(t.rows[0].token, 16);
  EXPECT_EQ(t.rows[0].inter_dim, 128);
  EXPECT_EQ(t.rows[0].q_type, "QuantType.per_Token");
  EXPECT_EQ(t.rows[0].block_m, 32);
  EXPECT_EQ(t.rows[0].us, 10.5);
  EXPECT_DOUBLE_EQ(t.rows[0].err, 0.0025);  // the larger of err1 0.1% and err2 0.25%
  EXPECT_EQ(t.rows[0].kernel_name, "k1");   // kernelName2 "Null": one stage
  EXPECT_EQ(t.rows[1].kernel_name, "k1+k2");
  EXPECT_EQ(t.rows[1].line, 3);
  EXPECT_EQ(t.rows[1].file, f);
  // Neither column set: bad input naming the column.
  const std::string bad = d.write("bad.csv", {"gfx,cu_num,token", "gfx942,80,1"});
  try {
    read_table_file(bad);
    FAIL() << "a header of neither column set was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("bad.csv:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model_dim"), std::string::npos) << e.what();
  }
  const std::string pct = d.write("pct.csv", {kAiterHeader, aiter(80, 16, "k1", "1x")});
  EXPECT_THROW(read_table_file(pct), Error);
}

// Every cell of a number column of either column set is a number or empty, in the columns a reader uses and the ones
// it does not (an AITER table's runner_up_us / runner_up_err, its err1 beside err, an err1 beside this harness's
// columns), and the header names no column twice, two unnamed ones included: bad input naming file:line, the column
// and the fix (issue 48: "date1", NUL bytes and two empty header cells were loaded).
TEST(TableSet, EveryNumberCellOfEitherColumnSetIsANumberAndNoHeaderCellRepeats) {
  Dir d;
  const std::string nul("\0\0", 2);
  const std::string row = aiter(80, 16, "k1", "10");
  TuningRow h;
  h.gfx = "host"; h.cu_num = 2; h.token = 1; h.model_dim = 256; h.inter_dim = 256; h.expert = 16; h.topk = 4;
  h.shape = "s/T*/decode"; h.us = 1;
  const std::string ours_header = tuning_header(), ours_row = tuning_csv_line(h);
  struct Bad {
    const char* name;
    std::vector<std::string> lines;
    std::string key;
  };
  const std::vector<Bad> bad = {
      {"aiter_runner_up_us.csv", {std::string(kAiterHeader) + ",runner_up_us", row + ",date1"}, "runner_up_us"},
      {"aiter_runner_up_err.csv", {std::string(kAiterHeader) + ",runner_up_err", row + "," + nul}, "runner_up_err"},
      {"aiter_err1_beside_err.csv", {std::string(kAiterHeader) + ",err", row.substr(0, row.find("0.1%")) + "date1" +
                                                                         row.substr(row.find("0.1%") + 4) + ",0.1"},
       "err1"},
      {"ours_err1.csv", {ours_header + ",err1", ours_row + ",date1"}, "err1"},
      {"ours_two_unnamed.csv", {ours_header + ",,", ours_row + ",a,b"}, "header"},
      {"aiter_two_unnamed.csv", {std::string(kAiterHeader) + ",,", row + ",a,b"}, "header"},
  };
  for (const Bad& b : bad) {
    const std::string f = d.write(b.name, b.lines);
    const std::string line = b.key == "header" ? ":1" : ":2";
    for (const bool plain : {false, true}) {
      if (plain && b.name[0] == 'a') continue;  // read_tuning_table reads this harness's columns only
      try {
        (void)(plain ? read_tuning_table(f) : read_table_file(f));
        ADD_FAILURE() << b.name << " was read" << (plain ? " by read_tuning_table" : " by read_table_file");
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::bad_input) << e.what();
        EXPECT_EQ(e.key(), b.key) << e.what();
        EXPECT_EQ(e.where(), f + line) << e.what();
        EXPECT_FALSE(e.fix().empty()) << e.what();
      }
    }
  }
  // The same columns holding numbers (an AITER error with its '%') load.
  const std::string ok = d.write("ok.csv", {std::string(kAiterHeader) + ",runner_up_us,runner_up_err", row + ",9.5,0.2%"});
  EXPECT_EQ(read_table_file(ok).rows.size(), 1u);
  const std::string ours_ok = d.write("ours_ok.csv", {ours_header + ",err1,", ours_row + ",0.5,x"});
  EXPECT_EQ(read_table_file(ours_ok).rows.size(), 1u);  // one unnamed column is not a repeat
}

// A table starting with a UTF-8 byte order mark is refused in either column set (docs/reliability.md: "UTF-8
// without a byte order mark (a BOM is refused naming it, key `header`)"), naming FILE:1 and the fix.
TEST(TableSet, ReadTableFileRefusesAByteOrderMarkInEitherColumnSet) {
  Dir d;
  TuningRow h;
  h.gfx = "host"; h.cu_num = 2; h.token = 1; h.model_dim = 256; h.inter_dim = 256; h.expert = 16; h.topk = 4;
  h.shape = "s/T*/decode"; h.us = 1;
  const std::string bom = "\xEF\xBB\xBF";
  const std::string aiter_file = d.write("aiter_bom.csv", {bom + kAiterHeader, aiter(80, 16, "k1", "10")});
  const std::string ours_file = d.write("ours_bom.csv", {bom + tuning_header(), tuning_csv_line(h)});
  for (const std::string& f : {aiter_file, ours_file}) {
    try {
      (void)read_table_file(f);
      ADD_FAILURE() << f << " was read";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input) << e.what();
      EXPECT_EQ(e.key(), "header") << e.what();
      EXPECT_EQ(e.where(), f + ":1") << e.what();
      EXPECT_NE(e.problem().find("byte order mark"), std::string::npos) << e.what();
      EXPECT_NE(e.fix().find("without a BOM"), std::string::npos) << e.what();
    }
  }
  // The same bytes without the mark load: the mark alone is refused.
  EXPECT_EQ(read_table_file(d.write("aiter.csv", {kAiterHeader, aiter(80, 16, "k1", "10")})).rows.size(), 1u);
  EXPECT_EQ(read_table_file(d.write("ours.csv", {tuning_header(), tuning_csv_line(h)})).rows.size(), 1u);
}

TEST(TableSet, ReadsTagAndOverrideColumnsOfThisHarnessFormat) {
  Dir d;
  TuningRow r;
  r.gfx = "host"; r.cu_num = 2; r.token = 1; r.model_dim = 256; r.inter_dim = 256; r.expert = 16; r.topk = 4;
  r.shape = "s/T*/decode"; r.us = 1;
  TuningTable t{"", {r, r, r}};
  t.rows[1].tag = "candidate";
  t.rows[2].token = 2;
  t.rows[2].override_ack = "reviewed, \"quoted\"";
  const std::string f = (d.path / "ours.csv").string();
  write_tuning_table(t, f);  // a row carries a tag: the writer adds both optional columns
  const TuningTable back = read_table_file(f);
  ASSERT_FALSE(back.aiter);
  ASSERT_EQ(back.rows.size(), 3u);
  EXPECT_EQ(back.rows[0].tag, "");
  EXPECT_EQ(back.rows[1].tag, "candidate");
  EXPECT_EQ(back.rows[2].override_ack, "reviewed, \"quoted\"");
  EXPECT_EQ(back.rows[2].line, 4);
  EXPECT_EQ(back.rows[2].file, f);
  EXPECT_EQ(read_tuning_table(f).rows.size(), 3u);  // the plain reader reads past the optional columns
  EXPECT_EQ(read_table_set({f}).defects(), 1);  // row 4's `_override` cell acknowledges nothing in a set of one
}

// The key of the bad-input error f throws, or "" when it throws none.
template <class F>
std::string bad_input_key(F&& f, std::string* problem = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    if (problem) *problem = e.problem();
    return e.key();
  }
  return "";
}

TEST(TableSet, PathListsSplitOnColons_AnEmptyElementIsBadInputNamingTheOption) {
  EXPECT_EQ(split_table_paths({"a.csv:b/c.csv", "d.csv"}), (std::vector<std::string>{"a.csv", "b/c.csv", "d.csv"}));
  for (const char* bad : {"a.csv::b.csv", ":a.csv", "a.csv:", ""}) {
    std::string problem;
    EXPECT_EQ(bad_input_key([&] { split_table_paths({bad}, "--dispatch-table"); }, &problem), "--dispatch-table")
        << bad;
    EXPECT_NE(problem.find("empty element"), std::string::npos) << problem;
  }
}

// Two overlays of one file name in two directories (issue 48): overlay.csv:2 could be either, so it is refused
// naming both; a path names one table and acknowledges that table's override only.
TEST(TableSet, AcknowledgementOfASharedFileName_IsAmbiguous_APathNamesOneTable) {
  StockOverlay d;
  fs::create_directories(d.path / "d1");
  fs::create_directories(d.path / "d2");
  const std::string o1 = d.write("d1/overlay.csv", {kAiterHeader, aiter(80, 16, "overlayA", "9")});
  const std::string o2 = d.write("d2/overlay.csv", {kAiterHeader, aiter(80, 16, "overlayB", "8")});
  std::string problem;
  EXPECT_EQ(bad_input_key([&] { read_table_set({d.stock, o1, o2}, {"overlay.csv:2"}); }, &problem),
            "--acknowledge-override");
  EXPECT_NE(problem.find("ambiguous"), std::string::npos) << problem;
  EXPECT_NE(problem.find(o1), std::string::npos) << problem;
  EXPECT_NE(problem.find(o2), std::string::npos) << problem;
  // d1's row overrides stock:2, d2's row overrides d1's: naming d1's acknowledges exactly one of the two.
  TableSet s = read_table_set({d.stock, o1, o2}, {o1 + ":2"});
  ASSERT_EQ(s.overrides.size(), 2u);
  EXPECT_EQ(defects(s), 1);
  EXPECT_TRUE(has(s.findings, o2 + ":2", "not acknowledged", true));
  EXPECT_TRUE(has(s.findings, o1 + ":2", "override, acknowledged", false));
  // Another spelling of the same path is the same table.
  s = read_table_set({d.stock, o1, o2}, {(d.path / "d2" / ".." / "d1" / "overlay.csv").string() + ":2",
                                         (d.path / "d2" / "overlay.csv").string() + ":2"});
  EXPECT_EQ(defects(s), 0);
  // A line that is not a whole number from 1, or no line at all: bad input, never "names no row".
  for (const char* bad : {"overlay.csv", "overlay.csv:+2", "overlay.csv: 2", "overlay.csv:0", "overlay.csv:2x"})
    EXPECT_EQ(bad_input_key([&] { read_table_set({d.stock, d.overlay}, {bad}); }), "--acknowledge-override") << bad;
}

TEST(TableSet, TaggedRowsTakeNoPartOnEitherSide) {
  StockOverlay d;
  const TableSet s = read_table_set({d.stock, d.overlay}, {"overlay.csv:2", "overlay.csv:4"});
  ASSERT_EQ(s.tagged.size(), 3u);  // stock:4, stock:7, overlay:5
  EXPECT_EQ(where(s, s.tagged[0]), d.stock + ":4");
  EXPECT_EQ(where(s, s.tagged[1]), d.stock + ":7");
  EXPECT_EQ(where(s, s.tagged[2]), d.overlay + ":5");
  // overlay:3 meets only the tagged stock:4 and overlay:5's key only the untagged stock:6: neither is an override,
  // and stock:6 with the tagged stock:7 of its key is no duplicate.
  ASSERT_EQ(s.overrides.size(), 2u);
  EXPECT_EQ(defects(s), 0);
  std::string rule;
  EXPECT_EQ(looked_up(s, 80, 32, &rule), "overlay.csv:3");
  EXPECT_EQ(rule, "exact");
  EXPECT_EQ(looked_up(s, 80, 128, &rule), "stock.csv:6");  // overlay:5 is tagged: stock:6 serves
  // The checks judge no tagged row: a tagged placeholder and a tagged duplicate are no defect.
  const std::string f = d.write("tagged.csv", {kAiterHeader, aiter(80, 1, "k", "5"), aiter(80, 1, "k", "0", "wip"),
                                              aiter(80, 1, "k", "0", "wip")});
  EXPECT_TRUE(static_table_findings(read_table_file(f)).empty());
}

TEST(TableSet, LaterFilesOverridePerKeyAndEachOverrideNamesBothRows) {
  StockOverlay d;
  const TableSet s = read_table_set({d.stock, d.overlay});
  ASSERT_EQ(s.overrides.size(), 2u);
  EXPECT_EQ(where(s, s.overrides[0].winner), d.overlay + ":2");
  EXPECT_EQ(where(s, s.overrides[0].shadowed), d.stock + ":2");
  EXPECT_FALSE(s.overrides[0].any_cu);
  EXPECT_EQ(where(s, s.overrides[1].winner), d.overlay + ":4");
  EXPECT_EQ(where(s, s.overrides[1].shadowed), d.stock + ":5");
  EXPECT_TRUE(s.overrides[1].any_cu);
  // Not acknowledged: both are defects, each naming the overriding row (where) and the row it shadows.
  EXPECT_EQ(defects(s), 2);
  EXPECT_TRUE(has(s.findings, "overlay.csv:2", "overrides " + d.stock + ":2", true));
  EXPECT_TRUE(has(s.findings, "overlay.csv:4", "overrides " + d.stock + ":5", true));
  EXPECT_TRUE(has(s.findings, "overlay.csv:4", "on devices of 80 compute units", true));
  // The dispatched rows: stock:2 replaced; stock:5 stays (it serves every other CU count).
  std::vector<std::string> dispatched;
  for (RowRef r : s.dispatched) dispatched.push_back(where(s, r));
  EXPECT_EQ(dispatched, (std::vector<std::string>{d.stock + ":3", d.stock + ":5", d.stock + ":6", d.overlay + ":2",
                                                  d.overlay + ":3", d.overlay + ":4"}));
  std::string rule;
  EXPECT_EQ(looked_up(s, 80, 16, &rule), "overlay.csv:2");
  EXPECT_EQ(rule, "exact");
  EXPECT_EQ(looked_up(s, 80, 20, &rule), "overlay.csv:2");
  EXPECT_EQ(rule, "power of two below");
  // In the other order the stock rows are the later ones: stock:2 overrides overlay:2.
  const TableSet back = read_table_set({d.overlay, d.stock});
  EXPECT_EQ(looked_up(back, 80, 16), "stock.csv:2");
}

TEST(TableSet, OverridesPassOnlyAcknowledged) {
  StockOverlay d;
  // By flag, FILE as given or by its name.
  TableSet s = read_table_set({d.stock, d.overlay}, {d.overlay + ":2", "overlay.csv:4"});
  EXPECT_EQ(defects(s), 0);
  EXPECT_TRUE(has(s.findings, "overlay.csv:2", "override, acknowledged: overrides " + d.stock + ":2", false));
  // One of the two acknowledged: the other is still a defect.
  s = read_table_set({d.stock, d.overlay}, {"overlay.csv:2"});
  EXPECT_EQ(defects(s), 1);
  EXPECT_TRUE(has(s.findings, "overlay.csv:4", "not acknowledged", true));
  // An acknowledgement that names no overriding row (overlay:3 overrides nothing) is a defect.
  s = read_table_set({d.stock, d.overlay}, {"overlay.csv:2", "overlay.csv:4", "overlay.csv:3"});
  EXPECT_EQ(defects(s), 1);
  EXPECT_TRUE(has(s.findings, "--acknowledge-override", "'overlay.csv:3' names no row", true));
  // By an `_override` cell on the overriding row.
  const std::string acked = d.write("acked.csv", {std::string(kAiterHeader) + ",_override",
                                                  aiter(80, 16, "overlayA", "9") + ",reviewed: faster on 80 CUs",
                                                  aiter(80, 64, "overlayC", "7") + ",reviewed"});
  s = read_table_set({d.stock, acked});
  EXPECT_EQ(defects(s), 0);
  // A cell that acknowledges what is no override (the stock table left out of the set) is a defect.
  s = read_table_set({acked});
  EXPECT_EQ(defects(s), 2);
  EXPECT_TRUE(has(s.findings, "acked.csv:2", "overrides no row of an earlier table", true));
}

TEST(TableSet, AnyCuRowServesOtherCuCountsBelowAnExactMatch) {
  StockOverlay d;
  const TableSet s = read_table_set({d.stock, d.overlay}, {"overlay.csv:2", "overlay.csv:4"});
  std::string rule;
  // 304 CUs: only the cu_num 0 rows (stock:3 at 16, stock:5 at 64) apply.
  EXPECT_EQ(looked_up(s, 304, 16, &rule), "stock.csv:3");
  EXPECT_EQ(rule, "any-CU row (cu_num=0), exact");
  EXPECT_EQ(looked_up(s, 304, 100, &rule), "stock.csv:5");
  EXPECT_EQ(rule, "any-CU row (cu_num=0), power of two below");
  EXPECT_EQ(looked_up(s, 304, 8, &rule), "stock.csv:3");
  EXPECT_EQ(rule, "any-CU row (cu_num=0), smallest tier");
  // 80 CUs: the exact-CU row of a token wins over the any-CU row of the same token, in one file too.
  EXPECT_EQ(looked_up(s, 80, 64), "overlay.csv:4");
  const TableSet stock_only = read_table_set({d.stock});
  EXPECT_EQ(looked_up(stock_only, 80, 16, &rule), "stock.csv:2");
  EXPECT_EQ(rule, "exact");
  EXPECT_EQ(looked_up(stock_only, 80, 64, &rule), "stock.csv:5");  // no exact-CU row at 64: the any-CU one
  EXPECT_EQ(rule, "any-CU row (cu_num=0), exact");
  EXPECT_EQ(defects(stock_only), 0);  // cu 80 and cu 0 rows of one key in one file: no duplicate
  // Another arch: nothing.
  TuningRow other = key(s, 80, 16);
  other.gfx = "gfx950";
  EXPECT_FALSE(lookup_in_set(s, other).has_value());
}

TEST(TableSet, DuplicateKeysWithinAFileAreDefects) {
  Dir d;
  const std::string f = d.write("dup.csv", {kAiterHeader, aiter(80, 16, "a", "9"), aiter(80, 16, "b", "8")});
  const TableSet s = read_table_set({f});
  EXPECT_EQ(defects(s), 1);
  EXPECT_TRUE(has(s.findings, "dup.csv:3", "duplicates the key of line 2", true));
  // check-table reports it once (its per-file checks), not twice.
  const SetCheck c = check_table_set(s, {});
  int n = 0;
  for (const SetFinding& x : c.findings) n += x.message.find("duplicates the key") != std::string::npos;
  EXPECT_EQ(n, 1);
  EXPECT_EQ(c.exit_code(), 1);
}

TEST(TableSet, CheckTableJudgesAiterRowsStatically) {
  StockOverlay d;
  SetCheck c = check_table_set(read_table_set({d.stock, d.overlay}, {"overlay.csv:2", "overlay.csv:4"}), {});
  EXPECT_EQ(c.defects(), 0);
  EXPECT_EQ(c.rows, 10);
  EXPECT_EQ(c.aiter_rows, 7);  // the untagged rows
  EXPECT_EQ(c.exit_code(), 0);
  // Placeholder zeros (the review's overlay had all measured columns at 0) are defects.
  const std::string zeros = d.write("zeros.csv", {kAiterHeader, aiter(80, 1, "k", "0")});
  c = check_table_set(read_table_set({zeros}), {});
  EXPECT_TRUE(has(c.findings, "zeros.csv:2", "us is zero or missing", true));
  EXPECT_EQ(c.exit_code(), 1);
}

}  // namespace
}  // namespace moe
