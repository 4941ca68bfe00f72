// Tuned tables: the CSV round trip, the lookup rule on hand-placed keys, and each defect check-table refuses,
// planted in hand-written rows.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "fixtures/error.hpp"
#include "harness/tuning/table_checks.hpp"
#include "harness/tuning/tuning_table.hpp"

namespace moe {
namespace {

TuningRow row(std::int64_t token, int line) {
  TuningRow r;
  r.line = line;
  r.gfx = "host";
  r.cu_num = int(std::thread::hardware_concurrency());
  r.token = token;
  r.model_dim = 256; r.inter_dim = 256; r.expert = 16; r.topk = 4;
  r.act_type = "silu"; r.dtype = "bf16"; r.q_dtype_a = "none"; r.q_dtype_w = "bf16"; r.q_type = "none";
  r.shape = "custom-h256/T*/decode";
  r.us = 10.0 + double(token);
  r.err = 1e-3;
  r.kernel_name = "host/atomic";
  r.kernel_id = "host-contract";
  r.kernel_version = "1";
  r.case_id = "custom-h256/T" + std::to_string(token) + "/decode";
  return r;
}

TuningTable table(std::initializer_list<std::int64_t> tokens) {
  TuningTable t;
  int line = 2;
  for (std::int64_t n : tokens) t.rows.push_back(row(n, line++));
  return t;
}

std::int64_t looked_up(const TuningTable& t, std::int64_t tokens, std::string* rule = nullptr) {
  TuningRow key = t.rows.front();
  key.token = tokens;
  const auto l = lookup(t, key);
  if (!l) return -1;
  if (rule) *rule = l->rule;
  return l->row->token;
}

TEST(TuningTable, LookupTakesThePowerOfTwoBelowThenTheCoarseTierBelowThenTheSmallest) {
  const TuningTable t = table({1, 4, 16, 24});
  std::string rule;
  EXPECT_EQ(looked_up(t, 4, &rule), 4); EXPECT_EQ(rule, "exact");
  EXPECT_EQ(looked_up(t, 5, &rule), 4); EXPECT_EQ(rule, "power of two below");
  EXPECT_EQ(looked_up(t, 3, &rule), 1); EXPECT_EQ(rule, "coarse tier below");  // 2 is no key: the tier below, 1
  EXPECT_EQ(looked_up(t, 20, &rule), 16); EXPECT_EQ(rule, "power of two below");
  EXPECT_EQ(looked_up(t, 31, &rule), 16);  // 16 is the power of two below 31: it wins over the nearer 24
  EXPECT_EQ(looked_up(t, 200, &rule), 24); EXPECT_EQ(rule, "coarse tier below");  // 128 is no key
  TuningRow other = t.rows.front();
  other.shape = "another/T*/decode";
  EXPECT_FALSE(lookup(t, other).has_value());
  other = t.rows.front();
  other.gfx = "sm_90";  // the same shape on another device has no row
  EXPECT_FALSE(lookup(t, other).has_value());
  const TuningTable high = table({8, 16});
  EXPECT_EQ(looked_up(high, 2, &rule), 8); EXPECT_EQ(rule, "smallest tier");
}

bool has(const std::vector<TableFinding>& f, int line, const std::string& text) {
  for (const TableFinding& x : f) if (x.line == line && x.message.find(text) != std::string::npos) return true;
  return false;
}

TEST(TuningTable, PlaceholderNonFiniteAndNegativeValuesAreDefects) {
  TuningTable t = table({1, 2, 4, 8});
  t.rows[0].us = 0;                         // a placeholder zero
  t.rows[1].us = std::nan("");              // a non-finite baseline accepted by a tuner
  t.rows[2].err = -1e-3;
  t.rows[3].runner_up = "grouped-t8"; t.rows[3].runner_up_us = HUGE_VAL; t.rows[3].runner_up_err = 1e-3;
  const auto f = static_table_findings(t);
  EXPECT_TRUE(has(f, 2, "us is zero or missing"));
  EXPECT_TRUE(has(f, 3, "us nan is not finite"));
  EXPECT_TRUE(has(f, 4, "err -0.001 is negative"));
  EXPECT_TRUE(has(f, 5, "runner_up_us inf is not finite"));
  EXPECT_EQ(f.size(), 4u);
  t = table({1, 2});
  t.rows[0].err = 0;  // a measured zero (a kernel bit-equal to the contract): only a reproduction can tell
  EXPECT_TRUE(static_table_findings(t).empty());
}

TEST(TuningTable, DuplicateKeysAndUnreachedTokenKeysAreDefects) {
  TuningTable t = table({1, 2, 2});
  auto f = static_table_findings(t);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(has(f, 4, "duplicates the key of line 3"));
  // 6 between the keys 4 and 8: at 7 the lookup takes the power of two below, 4, so the row at 6 serves only 6.
  t = table({4, 6, 8});
  f = static_table_findings(t);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(has(f, 3, "token key 6 is reached only at exactly 6: at 7"));
  EXPECT_TRUE(has(f, 3, "takes the row at token 4"));
  EXPECT_TRUE(static_table_findings(table({1, 3, 5, 7, 16})).empty());  // each reached between it and the next
}

TEST(TuningTable, RowsOfAnotherDeviceAreNotCheckedAndStaleVersionsAreDefects) {
  TuningTable t = table({1, 2});
  t.rows[0].gfx = "gfx942"; t.rows[0].cu_num = 304;
  t.rows[1].kernel_version = "0";
  TableCheck c = check_table(t, {});
  EXPECT_TRUE(has(c.findings, 2, "not checked: the row is for gfx942 with 304 compute units, this device is host"));
  EXPECT_TRUE(has(c.findings, 3, "made by host-contract version '0'; this build's is '1'"));
  EXPECT_EQ(c.defects(), 1);
  EXPECT_EQ(c.checked, 0);
  TableCheckOptions strict;
  strict.require_device = true;
  EXPECT_EQ(check_table(t, strict).defects(), 2);  // --require-device: the other device's row is a defect too
}

TEST(TuningTable, CsvRoundTripAndBadCells) {
  const auto dir = std::filesystem::temp_directory_path() / "moe_tuning_table_test";
  std::filesystem::create_directories(dir);
  TuningTable t = table({1, 2});
  t.rows[1].dispatch = "grouped_tokens_per_pass=8,grouped_mma=off";  // a cell with a comma: quoted
  t.rows[1].gfx = "gfx942";  // a GPU row: the kernels that run on the host have no dispatch choice
  t.rows[1].device_name = "a \"quoted\" name";
  write_tuning_table(t, (dir / "t.csv").string());
  const TuningTable back = read_tuning_table((dir / "t.csv").string());
  ASSERT_EQ(back.rows.size(), 2u);
  EXPECT_TRUE(same_key(back.rows[1], t.rows[1]));
  EXPECT_EQ(back.rows[1].dispatch, "grouped_tokens_per_pass=8,grouped_mma=off");
  EXPECT_EQ(back.rows[1].device_name, "a \"quoted\" name");
  EXPECT_EQ(back.rows[1].us, 12.0);
  EXPECT_EQ(back.rows[1].line, 3);
  std::ofstream(dir / "bad.csv") << tuning_header() << "\n" << "host,2,x\n";
  try {
    read_tuning_table((dir / "bad.csv").string());
    FAIL() << "a short row was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:2"), std::string::npos) << e.what();
    EXPECT_EQ(e.code(), ExitCode::bad_input);
  }
  std::ofstream(dir / "nohdr.csv") << "gfx,token\nhost,1\n";
  EXPECT_THROW(read_tuning_table((dir / "nohdr.csv").string()), Error);
  std::filesystem::remove_all(dir);
}

// A table is refused whole, before any case runs, for a row no reader could use: a dispatch choice that does not
// parse, a shape key its case_id cannot give (no lookup reaches it), and a byte order mark named as such.
TEST(TuningTable, ReadRefusesGarbageDispatchUnreachableShapeAndBom) {
  const auto dir = std::filesystem::temp_directory_path() / "moe_tuning_table_refusals";
  std::filesystem::create_directories(dir);
  const auto refused = [&](const std::string& name, TuningTable t, const std::string& key, bool bom = false) {
    write_tuning_table(t, (dir / name).string());
    if (bom) {
      std::ifstream in(dir / name);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::ofstream(dir / name) << "\xEF\xBB\xBF" << text;
    }
    try {
      read_tuning_table((dir / name).string());
      ADD_FAILURE() << name << " was read";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input) << e.what();
      EXPECT_EQ(e.key(), key) << e.what();
      EXPECT_EQ(e.where(), (dir / name).string() + (bom ? ":1" : ":2")) << e.what();
    }
  };
  TuningTable t = table({4});
  t.rows[0].dispatch = "grouped_mma=banana";
  refused("dispatch.csv", t, "dispatch");
  t = table({4});
  t.rows[0].shape = "custom-h512/T*/decode";
  refused("shape.csv", t, "shape");
  refused("bom.csv", table({4}), "header", true);
  std::filesystem::remove_all(dir);
}

// The file of table({4}) with `column`'s cell replaced by `cell` (as written, unquoted) and `extra` appended to the
// header: what a hand-edited table may hold.
std::string edited_table(const std::filesystem::path& file, const std::string& column, const std::string& cell,
                         const std::string& extra_header = "") {
  std::vector<std::string> head = tuning_csv_cells(tuning_header()), cells = tuning_csv_cells(tuning_csv_line(row(4, 2)));
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i)
    line += (i ? "," : "") + (head[i] == column ? cell : cells[i].find(',') == std::string::npos ? cells[i] : "\"" + cells[i] + "\"");
  std::ofstream(file) << tuning_header() << extra_header << "\n" << line << (extra_header.empty() ? "" : ",,") << "\n";
  return file.string();
}

// The key of the bad-input error reading `file` throws ("" when it is read) and its problem text.
std::string refusal(const std::string& file, std::string* problem = nullptr) {
  try {
    (void)read_tuning_table(file);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input) << e.what();
    if (problem) *problem = e.problem();
    return e.key();
  }
  return "";
}

// Issue 48: numbers go through the one strict parser (a leading space or '+', a hex float, a value past the
// column's type are refused, never read as 2, 3, 16 or wrapped), a header names each column once, and a dispatch
// cell is what tune writes: no switch twice, no trailing empty item, none on a host row.
TEST(TuningTable, ReadRefusesLooseNumbersDuplicateColumnsAndDispatchCellsTuneNeverWrites) {
  const auto dir = std::filesystem::temp_directory_path() / "moe_tuning_table_strict";
  std::filesystem::create_directories(dir);
  const auto f = dir / "t.csv";
  std::string problem;
  EXPECT_EQ(refusal(edited_table(f, "cu_num", " 2"), &problem), "cu_num");
  EXPECT_NE(problem.find("space"), std::string::npos) << problem;
  EXPECT_EQ(refusal(edited_table(f, "cu_num", "18446744073709551616"), &problem), "cu_num");
  EXPECT_NE(problem.find("outside"), std::string::npos) << problem;
  EXPECT_EQ(refusal(edited_table(f, "cu_num", "4294967298")), "cu_num");  // past int: not wrapped to 2
  EXPECT_EQ(refusal(edited_table(f, "token", "+3")), "token");
  EXPECT_EQ(refusal(edited_table(f, "token", "0x10")), "token");
  EXPECT_EQ(refusal(edited_table(f, "us", "0x1p4"), &problem), "us");
  EXPECT_NE(problem.find("hex"), std::string::npos) << problem;
  EXPECT_EQ(refusal(edited_table(f, "err", "+0.001")), "err");
  EXPECT_EQ(refusal(edited_table(f, "us", "NaN")), "us");  // not as a tuner prints it
  // A non-finite time as printf writes it is read, for check-table to report as a defect.
  EXPECT_EQ(refusal(edited_table(f, "us", "nan")), "");
  EXPECT_TRUE(std::isnan(read_tuning_table(f.string()).rows[0].us));
  EXPECT_EQ(refusal(edited_table(f, "us", "12.5")), "");
  EXPECT_EQ(refusal(edited_table(f, "us", "12.5", ",_tag,_tag"), &problem), "_tag");
  EXPECT_NE(problem.find("twice"), std::string::npos) << problem;
  EXPECT_EQ(refusal(edited_table(f, "us", "12.5", ",_override,_override")), "_override");
  EXPECT_EQ(refusal(edited_table(f, "us", "12.5", ",us")), "us");
  // gfx host (row()): any choice is refused; on a GPU row a switch set twice or a trailing comma.
  EXPECT_EQ(refusal(edited_table(f, "dispatch", "grouped_tokens_per_pass=8"), &problem), "dispatch");
  EXPECT_NE(problem.find("host row"), std::string::npos) << problem;
  const auto gpu_row = [&](const std::string& dispatch) {
    std::string text = "";
    {
      std::ifstream in(edited_table(f, "dispatch", dispatch));
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    text.replace(text.find("\nhost,"), 6, "\ngfx942,");
    std::ofstream(f) << text;
    return f.string();
  };
  EXPECT_EQ(refusal(gpu_row("grouped_mma=off")), "");
  EXPECT_EQ(refusal(gpu_row("\"grouped_mma=on,grouped_mma=off\""), &problem), "dispatch");
  EXPECT_NE(problem.find("twice"), std::string::npos) << problem;
  EXPECT_EQ(refusal(gpu_row("\"grouped_mma=on,\""), &problem), "dispatch");
  EXPECT_NE(problem.find("empty item"), std::string::npos) << problem;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace moe
