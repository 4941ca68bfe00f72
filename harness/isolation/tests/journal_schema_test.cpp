// The run journal's schema and order (harness/isolation/journal_schema.hpp, read_journal()) and that a record of
// another run is refused wherever it stands (journal_checks.hpp): each malformed journal is bad input naming the key
// docs/reliability.md ("Run journal") gives it.
#include "harness/isolation/journal_schema.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/isolation/journal.hpp"
#include "harness/isolation/journal_checks.hpp"
#include "harness/isolation/run_session.hpp"
#include "reports/record_json.hpp"

namespace moe {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

CaseRecord record(const std::string& id, const std::string& kernel = "host-contract") {
  CaseRecord r;
  r.id = id;
  r.kernel = kernel;
  r.status = Status::pass;
  return r;
}

// A whole run of two tests as the harness writes it: start, plan, two records, end.
std::vector<json> valid_journal(const std::string& suite_file = "none.yaml", std::uint64_t suite_hash = 0,
                                const std::vector<std::string>& ids = {"a", "b"}) {
  Provenance p;
  p.harness_commit = "abc";
  p.kernels = {{"host-contract", "1"}};
  p.suite_file = suite_file;
  p.suite_hash = suite_hash;
  p.seed = "case";
  RunOptions o;
  o.suite = suite_file;
  json run = run_options_to_json(o);
  return {{{"type", "start"},
           {"journal_version", 1},
           {"provenance", provenance_to_json(p)},
           {"run", run},
           {"run_digest", run_digests(run)},
           {"time", "t"}},
          {{"type", "plan"}, {"tests", ids.size()}, {"time", "t"}},
          {{"type", "record"}, {"slot", 0}, {"record", case_record_to_json(record(ids[0]))}, {"time", "t"}},
          {{"type", "record"}, {"slot", 1}, {"record", case_record_to_json(record(ids[1]))}, {"time", "t"}},
          {{"type", "end"}, {"interrupted", ""}, {"time", "t"}}};
}

class JournalSchema : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("moe-journal-schema-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  void write(const std::vector<json>& lines, const std::string& prefix = "") {
    std::ofstream out(journal_path(dir), std::ios::binary | std::ios::trunc);
    out << prefix;
    for (const json& l : lines) out << l.dump() << "\n";
  }
  // The key the reader and the record check refuse the journal with, "" when both accept it.
  std::string refused_key() {
    try {
      check_journal_records(read_journal(dir));
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input) << e.what();
      return e.key();
    }
    return "";
  }
  fs::path dir;
};

TEST_F(JournalSchema, TheHarnessesOwnFormIsAccepted) {
  write(valid_journal());
  EXPECT_EQ(refused_key(), "");
  auto lines = valid_journal();  // killed, then resumed by the same build
  lines.insert(lines.begin() + 3, json{{"type", "resume"}, {"harness_commit", "abc"}, {"time", "t"}});
  write(lines);
  EXPECT_EQ(refused_key(), "");
}

TEST_F(JournalSchema, EachMalformedLineIsRefusedNamingItsKey) {
  struct Variant {
    const char* what;
    std::function<void(std::vector<json>&)> edit;
    const char* key;
  };
  const std::vector<Variant> variants = {
      {"a second start line", [](auto& l) { l.insert(l.begin() + 2, l[0]); }, "type"},
      {"an end line mid-file", [](auto& l) { l.insert(l.begin() + 2, l.back()); }, "type"},
      {"interrupted SIGKILL", [](auto& l) { l.back()["interrupted"] = "SIGKILL"; }, "interrupted"},
      {"plan -1", [](auto& l) { l[1]["tests"] = -1; }, "tests"},
      {"plan 2^64-1", [](auto& l) { l[1]["tests"] = std::uint64_t(-1); }, "tests"},
      {"plan fewer than the records", [](auto& l) { l[1]["tests"] = 1; }, "tests"},
      {"plan 2.5", [](auto& l) { l[1]["tests"] = 2.5; }, "tests"},
      {"a record before the plan", [](auto& l) { std::swap(l[1], l[2]); }, "type"},
      {"an unknown line type",
       [](auto& l) {
         l.insert(l.begin() + 2, json{{"type", "note"}});
       },
       "type"},
      {"an unknown key", [](auto& l) { l[1]["extra"] = 1; }, "extra"},
      {"a resume line's commit a number",
       [](auto& l) {
         l.insert(l.begin() + 3, json{{"type", "resume"}, {"harness_commit", 42}});
       },
       "harness_commit"},
      {"a resume line of another build",
       [](auto& l) {
         l.insert(l.begin() + 3, json{{"type", "resume"}, {"harness_commit", "def"}});
       },
       "harness_commit"},
      {"run.seed -1", [](auto& l) { l[0]["run"]["seed"] = -1; }, "run.seed"},
      {"run.seed 7 at the case seeds", [](auto& l) { l[0]["run"]["seed"] = 7; }, "run.seed"},
      {"run.seed 7 against provenance.seed, no run_digest",
       [](auto& l) {
         l[0].erase("run_digest");
         l[0]["run"]["seed"] = 7;
       },
       "run.seed"},
      {"run.seed 2^64-1 at the case seeds", [](auto& l) { l[0]["run"]["seed"] = std::uint64_t(-1); }, "run.seed"},
      {"run.host_budget -5", [](auto& l) { l[0]["run"]["host_budget"] = -5; }, "run.host_budget"},
      {"run.host_budget 1000, in range but not what the run wrote",
       [](auto& l) { l[0]["run"]["host_budget"] = 1000.0; }, "run.host_budget"},
      {"run.filters edited", [](auto& l) { l[0]["run"]["filters"] = json::array({"*"}); }, "run.filters"},
      {"run.host_budget NaN as a string", [](auto& l) { l[0]["run"]["host_budget"] = "nan"; }, "run.host_budget"},
      {"run.timing not a bool", [](auto& l) { l[0]["run"]["timing"] = 1; }, "run.timing"},
      {"an unknown run option", [](auto& l) { l[0]["run"]["turbo"] = true; }, "run.turbo"},
      {"journal_version 1.0", [](auto& l) { l[0]["journal_version"] = 1.0; }, "journal_version"},
      {"a slot of 2^32", [](auto& l) { l[2]["slot"] = std::uint64_t(1) << 32; }, "slot"},
      {"a time that is a number", [](auto& l) { l[1]["time"] = 5; }, "time"},
  };
  for (const Variant& v : variants) {
    auto lines = valid_journal();
    v.edit(lines);
    write(lines);
    EXPECT_EQ(refused_key(), v.key) << v.what;
  }
}

TEST_F(JournalSchema, AByteOrderMarkIsRefused) {
  write(valid_journal(), "\xEF\xBB\xBF");
  EXPECT_EQ(refused_key(), "type");
}

TEST_F(JournalSchema, AForeignRecordIsRefusedAlsoWhenALaterLineTakesItsSlot) {
  auto lines = valid_journal();
  lines.insert(lines.begin() + 2,
               json{{"type", "record"}, {"slot", 0}, {"record", case_record_to_json(record("a", "gpu-other"))}});
  write(lines);
  EXPECT_EQ(refused_key(), "record.kernel");
  lines = valid_journal();  // a record of the run's kernel, but of the case of another slot, replaced later
  lines.insert(lines.begin() + 2, json{{"type", "record"}, {"slot", 0}, {"record", case_record_to_json(record("b"))}});
  write(lines);
  EXPECT_EQ(refused_key(), "slot");
}

TEST_F(JournalSchema, ASlotOutsideTheRunIsRefusedByReportAsByResume) {
  // The smoke suite's file, unchanged: its selected cases give each slot's (case, kernel), as the run registered them.
  const Suite s = load_suite_file(resolve_suite("smoke"));
  ASSERT_GE(s.cases.size(), 2u);
  auto lines = valid_journal(s.file, s.file_hash, {s.cases[0].id, s.cases[1].id});
  lines[1]["tests"] = s.cases.size();
  write(lines);
  EXPECT_EQ(refused_key(), "");
  lines[3]["slot"] = 99999;
  write(lines);
  EXPECT_EQ(refused_key(), "slot");
  lines[3]["slot"] = 2;  // in range, but the run has another case there
  write(lines);
  EXPECT_EQ(refused_key(), "slot");
}

}  // namespace
}  // namespace moe
