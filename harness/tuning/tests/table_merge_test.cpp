// `tune --merge-into` (table_merge.hpp): rows replaced in place only for the tuned cases on the tuned device; a key
// that would go missing or a merged duplicate refuses the merge; a crash between rows leaves the table's bytes as
// they were and the rows tuned so far in TABLE.partial, from which the next run resumes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "harness/tuning/table_merge.hpp"

namespace moe {
namespace {

namespace fs = std::filesystem;

TuningRow row(std::int64_t token, double us) {
  TuningRow r;
  r.gfx = "host";
  r.cu_num = 2;
  r.token = token;
  r.model_dim = 256; r.inter_dim = 256; r.expert = 16; r.topk = 4;
  r.act_type = "silu"; r.dtype = "bf16"; r.q_dtype_a = "none"; r.q_dtype_w = "bf16"; r.q_type = "none";
  r.shape = "custom-h256/T*/decode";
  r.us = us;
  r.err = 1e-3;
  r.kernel_name = "host/atomic";
  r.kernel_id = "host-contract";
  r.kernel_version = "1";
  r.case_id = "custom-h256/T" + std::to_string(token) + "/decode";
  return r;
}

TuningTable old_table() {
  TuningTable t;
  t.file = "old.csv";
  t.rows = {row(1, 10), row(2, 20), row(1, 30), row(2, 40)};
  t.rows[2].gfx = "sm_90";  // another device's row of the same case: not replaced
  t.rows[3].tag = "exp";    // a tagged row of a tuned case: not dispatched, not replaced
  for (std::size_t i = 0; i < t.rows.size(); ++i) t.rows[i].line = int(i) + 2;
  return t;
}

const std::set<std::string> kTuned = {"custom-h256/T1/decode", "custom-h256/T2/decode"};

TEST(TableMerge, ReplacesTheTunedCasesRowsInPlace) {
  const MergeOutcome m = merge_tuned_rows(old_table(), {row(2, 6), row(1, 5)}, kTuned, "host", 2);
  EXPECT_TRUE(m.refused.empty());
  ASSERT_EQ(m.merged.rows.size(), 4u);
  EXPECT_EQ(m.merged.rows[0].us, 5);   // old line 2 (T1) took the new T1 row
  EXPECT_EQ(m.merged.rows[1].us, 6);   // old line 3 (T2)
  EXPECT_EQ(m.merged.rows[2].us, 30);  // sm_90: kept
  EXPECT_EQ(m.merged.rows[3].us, 40);  // tagged: kept, tag and all
  EXPECT_EQ(m.merged.rows[3].tag, "exp");
}

TEST(TableMerge, AMissingKeyOrADuplicateRefusesTheMerge) {
  // The new set lacks T2 (a truncated tuner output): the row at old line 3 would go.
  MergeOutcome m = merge_tuned_rows(old_table(), {row(1, 5)}, kTuned, "host", 2);
  ASSERT_EQ(m.refused.size(), 1u);
  EXPECT_NE(m.refused[0].find("old.csv:3: the row of case custom-h256/T2/decode at token 2 has no row in the new set"),
            std::string::npos) << m.refused[0];
  // New rows of cases not declared tuned are appended: with the old rows of their keys, duplicates.
  m = merge_tuned_rows(old_table(), {row(1, 5)}, {}, "host", 2);
  ASSERT_EQ(m.refused.size(), 1u);
  EXPECT_NE(m.refused[0].find("duplicates the key of line 2"), std::string::npos) << m.refused[0];
  // A new row of a new key is appended.
  m = merge_tuned_rows(old_table(), {row(1, 5), row(2, 6), row(4, 7)}, kTuned, "host", 2);
  EXPECT_TRUE(m.refused.empty());
  ASSERT_EQ(m.merged.rows.size(), 5u);
  EXPECT_EQ(m.merged.rows[4].token, 4);
}

struct Dir {
  fs::path path = fs::temp_directory_path() / ("moe_table_merge_test_" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
};

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(TableMerge, APartialOutputLeavesOutALineCutShort) {
  Dir d;
  const std::string p = (d.path / "t.csv.partial").string();
  {
    PartialWriter w(p);
    w.add(row(1, 5));
    w.add(row(2, 6));
  }
  std::ofstream(p, std::ios::app) << "host,2,4,256";  // the crash came mid-line
  const std::vector<TuningRow> rows = read_partial(p);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].token, 2);
  EXPECT_EQ(rows[1].us, 6);
  EXPECT_TRUE(read_partial((d.path / "absent.partial").string()).empty());
}

TEST(TableMerge, ACrashBetweenRowsLeavesTheTableUntouchedAndTheNextRunResumes) {
  Dir d;
  const std::string suite = (d.path / "merge.yaml").string();
  std::ofstream(suite) << "suite: merge\ndefaults: {hidden: 256, inter: 256, experts: 16, topk: 4}\n"
                          "cases:\n  - sweep: {tokens: [1, 2, 4]}\n";
  TuneOptions o;
  o.suite = suite;
  o.kernel = "host";
  TuningTable old = tune(o).table;
  ASSERT_EQ(old.rows.size(), 3u);
  TuningRow other = old.rows[0];
  other.gfx = "gfx942";
  other.cu_num = 80;
  old.rows.push_back(other);
  const std::string table = (d.path / "t.csv").string();
  write_tuning_table(old, table);
  const std::string before = bytes_of(table);

  TuneOptions crashing = o;
  int rows = 0;
  crashing.on_row = [&](const TuningRow&) {
    if (++rows == 2) throw std::runtime_error("killed between rows");
  };
  EXPECT_THROW(tune_merge_into(crashing, table), std::runtime_error);
  EXPECT_EQ(bytes_of(table), before);
  const std::vector<TuningRow> partial = read_partial(partial_path(table));
  ASSERT_EQ(partial.size(), 2u);  // the two rows chosen before the crash
  EXPECT_EQ(partial[0].token, 1);
  EXPECT_EQ(partial[1].token, 2);

  const MergeInto m = tune_merge_into(o, table);
  EXPECT_EQ(m.exit_code, 0);
  EXPECT_NE(m.lines.front().find("2 row(s) tuned before"), std::string::npos) << m.lines.front();
  EXPECT_FALSE(fs::exists(partial_path(table)));
  const TuningTable merged = read_tuning_table(table);
  ASSERT_EQ(merged.rows.size(), 4u);
  EXPECT_EQ(merged.rows[0].us, partial[0].us);  // taken from the partial output, not tuned again
  EXPECT_EQ(merged.rows[1].us, partial[1].us);
  EXPECT_EQ(merged.rows[3].gfx, "gfx942");      // the other device's row kept in its place
}

}  // namespace
}  // namespace moe
