// What `run` adds around GoogleTest for fault containment (docs/reliability.md "Fault containment"): the executor (isolated
// workers or in process), the run journal (every record appended the moment it exists), `--resume DIR` (the run's
// options and records read back from its journal; only the missing tests are judged), SIGINT/SIGTERM (no case
// starts; the cases in flight get kStopGraceSeconds, then are abandoned; reports written and marked incomplete:
// harness/isolation/stop_signal.hpp), and stale temporary files of a killed run removed.
// With several workers (--jobs N) the tests GoogleTest will run are queued in its order when the first of them
// starts, so the workers judge ahead of the test bodies; each record is journaled the moment it exists (completion
// order: one writer, this process) and each test body takes its own record (report order: the suite's).
#pragma once
#include <csignal>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/isolation/executor.hpp"
#include "harness/isolation/journal.hpp"
#include "harness/run/runner.hpp"
#include "harness/isolation/stop_signal.hpp"

namespace moe {

class RunSession {
 public:
  // Resuming: the journal's options replace the requested ones but for isolation, the case timeout and
  // --verbose; a suite file, harness build or kernel version that changed since is bad input (a mixed report
  // would be a lie). The report directory is the journal's (opt_.report_dir).
  explicit RunSession(const RunOptions& requested);
  ~RunSession();
  const RunOptions& options() const { return opt_; }
  const ExecConfig& config() const { return config_; }  // what the executor was built from
  CaseExecutor& executor() { return *executor_; }
  // Starts the journal in the report directory `dir` (or appends a resume line), removes stale temporary files and
  // installs the SIGINT/SIGTERM handlers. Resuming, p's start time becomes the original run's.
  void begin(const std::filesystem::path& dir, Provenance& p);
  // The GoogleTest test (suite and test name) judged into `slot` with request r; every test is added before the
  // run starts.
  void add_test(std::size_t slot, const CaseRequest& r, const std::string& suite, const std::string& name);
  // Resuming: every record of the journal sits in the slot of its own (case, kernel) among the tests registered
  // (add_test), else bad input naming the journal line; called once they all are, before any work.
  void check_resumed_slots() const;
  struct Judged {
    CaseRecord record;
    double seconds = 0;  // the case's own time (0 read back from the journal)
  };
  // One test's record: from the journal when it holds this slot, else judged (queued with the tests after it
  // when several workers run) and journaled; nullopt when a stop signal dropped it before it started, or abandoned
  // it in flight (its worker killed after kStopGraceSeconds).
  std::optional<Judged> judge(std::size_t slot);
  // Whether the slot's record exists or is being judged (so judge() returns it even after a stop signal).
  bool judging(std::size_t slot) const;
  // A SIGINT or SIGTERM arrived: later tests are not judged.
  bool stop_requested() const;
  std::string stop_signal_name() const;
  int exit_code_for_stop() const;  // 128 + the signal
  // The end line; an interrupted run's provenance is marked incomplete. Restores the signal handlers.
  void finish(Provenance& p, std::size_t judged);

 private:
  RunOptions opt_;
  ExecConfig config_;
  std::filesystem::path dir_;
  std::optional<Journal> resumed_;
  std::unique_ptr<CaseExecutor> executor_;
  std::unique_ptr<JournalWriter> journal_;
  bool planned_ = false;
  void queue_from(std::size_t slot);  // this slot's test and (several workers) those GoogleTest runs after it
  std::vector<CaseRequest> requests_;                                  // by slot
  std::map<std::pair<std::string, std::string>, std::size_t> slots_;  // (suite, test) -> slot
  std::map<std::size_t, CaseExecutor::Ticket> tickets_;                // slots queued or in flight
  std::map<CaseExecutor::Ticket, std::size_t> ticket_slots_;
  std::optional<StopSignals> stop_;  // from begin() to finish()
};

// The run's options in the journal's start line, and back (paths absolute, so a resume works from anywhere).
nlohmann::ordered_json run_options_to_json(const RunOptions& o);
RunOptions run_options_from_json(const nlohmann::ordered_json& j);
ExecConfig exec_config_for(const RunOptions& o);

}  // namespace moe
