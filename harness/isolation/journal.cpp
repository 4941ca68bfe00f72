#include "harness/isolation/journal.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <regex>

#include "fixtures/error.hpp"
#include "fixtures/input_file.hpp"
#include "harness/isolation/journal_schema.hpp"
#include "harness/isolation/wire.hpp"
#include "reports/record_json.hpp"

namespace moe {

std::filesystem::path journal_path(const std::filesystem::path& report_dir) { return report_dir / "journal.jsonl"; }

JournalWriter::JournalWriter(const std::filesystem::path& file, bool append) : file_(file) {
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (append ? 0 : O_TRUNC), 0644);
  if (fd_ < 0)
    throw_harness_error(file.string(), std::string("cannot open the run journal: ") + std::strerror(errno),
                        "check that the report directory is writable");
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JournalWriter::write(nlohmann::ordered_json line) {
  line["time"] = utc_now_iso8601();
  if (!wire::write_line(fd_, line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)))
    throw_harness_error(file_.string(), std::string("writing the run journal failed: ") + std::strerror(errno),
                        "free disk space");
}

Journal read_journal(const std::filesystem::path& dir) {
  Journal j;
  j.file = journal_path(dir);
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(j.file, ec)))
    throw_bad_input(j.file.string(), "", "no run journal here",
                    "pass the report directory of a `moe-harness run` (it writes journal.jsonl as it goes)");
  // A regular file within the report limit (it holds the same records as report.json, one a line).
  const std::string text = read_input_file(j.file, "run journal", kReportFileLimit);
  const char* fix = "the journal is written by the harness only; restore it or rerun the suite";
  if (text.rfind("\xEF\xBB\xBF", 0) == 0)  // JSON parsers skip it; the harness never writes one
    throw_bad_input(j.file.string() + ":1", "type", "starts with a UTF-8 byte order mark", fix);
  std::size_t pos = 0, line_no = 0;
  bool ended = false;                  // an end line, and no resume line since
  std::optional<std::size_t> planned;  // the most tests a plan line named
  std::size_t plan_line = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const bool last = nl == std::string::npos;  // a line cut short by a kill has no newline
    const std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++line_no;
    const std::string where = j.file.string() + ":" + std::to_string(line_no);
    nlohmann::ordered_json l;  // ordered: a record's probes keep their order
    try {
      l = nlohmann::ordered_json::parse(line);
    } catch (const std::exception& e) {
      if (last) {  // cut short by a kill mid-write: everything before it stands
        j.torn_tail = true;
        break;
      }
      throw_bad_input(where, "", std::string("malformed journal line: ") + e.what(), fix);
    }
    const JournalLine type = check_journal_line(l, where);
    if ((line_no == 1) != (type == JournalLine::start))
      throw_bad_input(where, "type", line_no == 1 ? "the first line is not a start line: not a moe-harness run journal"
                                                  : "a second start line: a journal holds one run",
                      line_no == 1 ? "pass a report directory written by this harness version" : fix);
    if (ended && type != JournalLine::resume)
      throw_bad_input(where, "type", fmt::format("a {} line after the run's end line", l["type"].get<std::string>()),
                      fix);
    try {
      switch (type) {
        case JournalLine::start:
          j.start = l;
          check_journal_run(l, where);
          break;
        case JournalLine::plan:
          if (const std::size_t n = l["tests"].get<std::size_t>(); !planned || n > *planned) {
            planned = n;
            plan_line = line_no;
          }
          break;
        case JournalLine::record: {
          if (!planned) throw_bad_input(where, "type", "a record before the plan line", fix);
          const std::size_t s = l["slot"].get<std::size_t>();
          j.records[s] = case_record_from_json(l["record"], where, "record");
          j.record_lines[s] = line_no;
          j.record_lines_read.push_back({line_no, s, j.records[s].kernel, j.records[s].id});
          break;
        }
        case JournalLine::resume: {
          const nlohmann::ordered_json& was = j.start["provenance"].value("harness_commit", nlohmann::ordered_json());
          if (l["harness_commit"] != was)
            throw_bad_input(where, "harness_commit",
                            fmt::format("{} is not the build that started the run ({}): a run resumes only with "
                                        "its own build",
                                        l["harness_commit"].dump(), was.dump()),
                            fix);
          ++j.resumes;
          ended = j.finished = false;
          j.interrupted.clear();
          break;
        }
        case JournalLine::end:
          ended = j.finished = true;
          j.interrupted = l["interrupted"];
          break;
      }
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw_bad_input(where, "", std::string("malformed journal line: ") + e.what(), fix);
    }
    j.last_time = l.value("time", j.last_time);
  }
  if (j.start.is_null())
    throw_bad_input(j.file.string(), "", "the journal is empty (the run was killed before its first line)",
                    "rerun the suite");
  j.planned = planned;
  if (planned && j.records.size() > *planned)
    throw_bad_input(fmt::format("{}:{}", j.file.string(), plan_line), "tests",
                    fmt::format("{} test(s) planned, {} slots recorded", *planned, j.records.size()), fix);
  return j;
}

Provenance journal_provenance(const Journal& j) {
  if (!j.start.contains("provenance"))
    throw_bad_input(j.file.string() + ":1", "provenance", "missing from the start line", "rerun the suite");
  return provenance_from_json(j.start["provenance"], j.file.string() + ":1");
}

RunReport report_from_journal(const Journal& j) {
  RunReport r;
  r.provenance = journal_provenance(j);
  for (const auto& [slot, rec] : j.records) r.cases.push_back(rec);
  Provenance& p = r.provenance;
  p.end_time = j.last_time;
  const std::string of = j.planned ? fmt::format("{} of the {} selected test(s)", r.cases.size(), *j.planned)
                                   : fmt::format("{} test(s)", r.cases.size());
  if (!j.finished) {
    p.incomplete = true;
    p.incomplete_reason = fmt::format("the run did not finish (killed, or still running): {} judged{}; rebuilt from "
                                      "its journal; `moe-harness run --resume DIR` judges the rest",
                                      of, j.torn_tail ? ", its last journal line cut short" : "");
  } else if (!j.interrupted.empty()) {
    p.incomplete = true;
    p.incomplete_reason = fmt::format("interrupted by {}: {} judged; `moe-harness run --resume DIR` judges the rest",
                                      j.interrupted, of);
  }
  return r;
}

std::vector<std::string> remove_stale_temp_files(const std::filesystem::path& dir) {
  std::vector<std::string> removed;
  std::error_code ec;
  static const std::regex tmp(R"(.*\.tmp\.([0-9]+))");
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file(ec) || !std::regex_match(name, m, tmp)) continue;
    const long pid = std::stol(m[1]);
    if (pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM)) continue;  // its writer is still alive
    if (std::filesystem::remove(e.path(), ec)) removed.push_back(name);
  }
  return removed;
}

}  // namespace moe
