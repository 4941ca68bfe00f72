// The run journal, DIR/journal.jsonl: one JSON object per line, each appended with one write(2) the moment it
// exists, so a run killed at any point (SIGKILL, a CI time-out, a crash of the harness itself) keeps every record
// it had. Lines:
//   {"type":"start", "journal_version":1, "provenance":{...}, "run":{the run's options}, "run_digest":{...}, "time"}
//   {"type":"plan", "tests":N, "time"}           the number of tests GoogleTest selected (filters, sharding)
//   {"type":"record", "slot":S, "record":{...}, "time"}   report.json's per-case form (reports/record_json.hpp)
//   {"type":"resume", "harness_commit", "time"}  `run --resume DIR` continues the run here
//   {"type":"end", "interrupted":"" | "SIGINT" | "SIGTERM", "time"}
// `moe-harness report DIR` rebuilds the report files from it; `run --resume DIR` judges only the slots it lacks.
// A last line cut short (killed mid-write) is ignored and said so; any other malformed line is bad input.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "reports/run_report.hpp"

namespace moe {

inline constexpr int kJournalVersion = 1;
// A record's slot is a test's index among the (case, kernel) tests of the run: below the suite case limit times the
// kernels a run can name, far below this bound; a larger one is no slot of any run.
inline constexpr std::uint64_t kMaxJournalSlot = std::uint64_t(1) << 32;
std::filesystem::path journal_path(const std::filesystem::path& report_dir);

class JournalWriter {
 public:
  // Creates the journal with its start line, or (resuming) opens it for appending.
  JournalWriter(const std::filesystem::path& file, bool append);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;
  void write(nlohmann::ordered_json line);  // adds "time"; throws a harness error when the write fails

 private:
  std::filesystem::path file_;
  int fd_ = -1;
};

// One record line as read: every record line is checked against the run (journal_checks.hpp), also one that a
// later line for its slot replaces.
struct JournalRecordLine {
  std::size_t line = 0, slot = 0;
  std::string kernel, id;
};

struct Journal {
  std::filesystem::path file;
  nlohmann::ordered_json start;               // the start line
  std::map<std::size_t, CaseRecord> records;  // by slot; a later line for a slot replaces an earlier one
  std::map<std::size_t, std::size_t> record_lines;  // slot -> the journal line its record was read from
  std::vector<JournalRecordLine> record_lines_read;  // every record line, in the journal's order
  std::optional<std::size_t> planned;
  bool finished = false;     // an end line after the last record and resume
  std::string interrupted;   // that end line's signal, when SIGINT or SIGTERM stopped the run
  std::string last_time;     // of the last line read
  bool torn_tail = false;    // the last line was cut short and ignored
  std::size_t resumes = 0;
};

// Bad input (exit 2) when DIR has no journal, a line other than the last one is not JSON, or any line breaks the
// schema (journal_schema.hpp) or the order: the start line first and once; a plan line before the first record and
// no fewer tests planned than slots recorded; after an end line only a resume line; a resume line naming the start
// line's harness_commit; no byte order mark.
Journal read_journal(const std::filesystem::path& report_dir);

// The start line's provenance (bad input naming the journal's first line and the key when it is malformed).
Provenance journal_provenance(const Journal& j);

// The run report the journal holds: its records in the run's order (by slot), the provenance of its start line
// ending at its last line; marked incomplete when the run did not reach its end line or was interrupted.
RunReport report_from_journal(const Journal& j);

// Removes DIR's temporary files of atomic writes (fixtures/atomic_file.hpp: NAME.tmp.PID) whose process is gone;
// returns their names.
std::vector<std::string> remove_stale_temp_files(const std::filesystem::path& dir);

}  // namespace moe
