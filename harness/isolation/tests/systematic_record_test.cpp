// The systematic statistics of a case in the one JSON form of records (reports/record_json.hpp): report.json, the
// run journal and the worker's reply all carry them, so a report rebuilt from a journal, or a record judged in a
// worker process, keeps every statistic as the verdict wrote it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "fixtures/error.hpp"
#include "harness/isolation/journal.hpp"
#include "harness/isolation/run_session.hpp"
#include "reports/record_json.hpp"
#include "reports/report_reader.hpp"
#include "reports/run_report.hpp"

namespace moe {
namespace {

namespace fs = std::filesystem;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

StatisticRecord stat(const char* name, const char* status, double z, double zt, double e, double ef, const char* at,
                     bool failed) {
  StatisticRecord s;
  s.name = name; s.status = status; s.z = z; s.z_threshold = zt; s.effect = e; s.effect_floor = ef; s.at = at;
  s.failed = failed;
  return s;
}

// The verdict's order (gain, channel, rounding_bias, expert: not alphabetical, so a reader that sorts keys shows),
// a failed one, a not-run one with NaN z and effect, and values that only survive bit for bit.
CaseRecord record_with_statistics() {
  CaseRecord r;
  r.id = "custom/T16/decode";
  r.kernel = "host-contract";
  r.status = Status::fail;
  r.reason = "channel: channel 7";
  r.failed_check = Check::channel;
  r.metrics = {{"min_cos", 0.99999}};
  r.systematic = {stat("gain", "ran", 0.1 + 0.2, 6.0, -1.0e-7, 1e-3, "", false),
                  stat("channel", "ran", 1e9, 7.0, 1.0, 0.02, "channel 7", true),
                  stat("rounding_bias", "not run: the output equals the reference element for element: no error to test",
                       std::nan(""), 6.0, std::nan(""), 0.1, "", false),
                  stat("expert", "ran", -2.5, 6.0, 4.9406564584124654e-324, 2e-3, "expert 3 (4 of 16 tokens)", false)};
  return r;
}

void expect_same_statistics(const std::vector<StatisticRecord>& b, const std::vector<StatisticRecord>& a) {
  ASSERT_EQ(b.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(b[i].name, a[i].name) << i;
    EXPECT_EQ(b[i].status, a[i].status) << a[i].name;
    EXPECT_TRUE(same_bits(b[i].z, a[i].z)) << a[i].name << " z " << b[i].z;
    EXPECT_TRUE(same_bits(b[i].z_threshold, a[i].z_threshold)) << a[i].name;
    EXPECT_TRUE(same_bits(b[i].effect, a[i].effect)) << a[i].name << " effect " << b[i].effect;
    EXPECT_TRUE(same_bits(b[i].effect_floor, a[i].effect_floor)) << a[i].name;
    EXPECT_EQ(b[i].at, a[i].at) << a[i].name;
    EXPECT_EQ(b[i].failed, a[i].failed) << a[i].name;
  }
}

TEST(SystematicRecord, RoundTripsThroughTheRecordJsonInTheVerdictsOrder) {
  const CaseRecord a = record_with_statistics();
  const CaseRecord b = case_record_from_json(nlohmann::ordered_json::parse(case_record_to_json(a).dump()));
  expect_same_statistics(b.systematic, a.systematic);
  ASSERT_EQ(b.systematic.size(), 4u);
  EXPECT_TRUE(std::isnan(b.systematic[2].z));  // not run: null in JSON, NaN again, never a 0
}

// A report rebuilt from a journal (`moe-harness report DIR`, `run --resume`) keeps them, and so does the report.json
// written from it and read back by compare, gate and html.
TEST(SystematicRecord, AReportRebuiltFromAJournalKeepsThem) {
  const fs::path dir = fs::temp_directory_path() / ("moe-systematic-record-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const CaseRecord a = record_with_statistics();
  {
    Provenance p;
    p.suite = "smoke";
    p.seed = "case";
    JournalWriter w(journal_path(dir), false);
    w.write({{"type", "start"}, {"journal_version", kJournalVersion}, {"provenance", provenance_to_json(p)},
             {"run", run_options_to_json(RunOptions{})}});
    w.write({{"type", "plan"}, {"tests", 1}});
    w.write({{"type", "record"}, {"slot", 0}, {"record", case_record_to_json(a)}});
    w.write({{"type", "end"}, {"interrupted", ""}});
  }
  const RunReport r = report_from_journal(read_journal(dir));
  ASSERT_EQ(r.cases.size(), 1u);
  expect_same_statistics(r.cases[0].systematic, a.systematic);
  const fs::path file = dir / "report.json";
  std::ofstream(file) << to_json_text(r);
  const ReadReport back = read_report(file);
  ASSERT_EQ(back.cases.size(), 1u);
  expect_same_statistics(back.cases[0].systematic, a.systematic);
  fs::remove_all(dir);
}

// Older records have no `systematic` (empty); a statistic missing a field, or a `failed` that is not a boolean, is
// bad input naming the full key.
TEST(SystematicRecord, AbsentIsEmptyAMissingOrMistypedFieldIsBadInput) {
  nlohmann::ordered_json j = case_record_to_json(record_with_statistics());
  nlohmann::ordered_json old = j;
  old.erase("systematic");
  EXPECT_TRUE(case_record_from_json(old).systematic.empty());
  for (const char* key : {"status", "z", "effect_floor", "at", "failed"}) {
    nlohmann::ordered_json k = j;
    k["systematic"]["channel"].erase(key);
    try {
      case_record_from_json(k, "journal.jsonl:3", "record");
      ADD_FAILURE() << "a statistic without " << key << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      EXPECT_EQ(e.where(), "journal.jsonl:3");
      EXPECT_EQ(e.key(), std::string("record.systematic.channel.") + key);
    }
  }
  j["systematic"]["gain"]["failed"] = "no";
  try {
    case_record_from_json(j, "journal.jsonl:3", "record");
    ADD_FAILURE() << "a string `failed` was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "record.systematic.gain.failed");
  }
}

}  // namespace
}  // namespace moe
