// SIGINT and SIGTERM: how every long command stops (docs/reliability.md "Stopping"). A CI runner cancels a job with
// SIGTERM and kills it a few seconds later, so a command must end within seconds of the signal, writing what it
// judged, marked interrupted, and exit 128 + N (130, 143): never 0, never a report that looks complete.
//  - The handler only records the signal (and says so on stderr); the command's loops ask stop_requested() between
//    cases and start nothing more.
//  - A case in flight in a worker process gets kStopGraceSeconds to end; then its worker is killed and the case is
//    abandoned: not judged, no record (`run --resume` judges it), never a pass (harness/isolation/supervisor.hpp).
//  - A case judged in this process (`--no-isolation`, `judge`, `tune`, `check-table --run`, `export --suite`) ends
//    on its own: the command stops after it.
//  - A second signal ends the process at once (SA_RESETHAND: the default action); a run's journal keeps what was
//    judged before it.
#pragma once
#include <string>

namespace moe {

// How long the cases in flight in worker processes may take to end after a stop signal.
inline constexpr double kStopGraceSeconds = 2.0;

// Installs the SIGINT and SIGTERM handlers for its lifetime (nested scopes restore the outer ones). `doing` ends
// the line the handler writes: "moe-harness: SIGTERM: <doing> (again to stop at once)".
class StopSignals {
 public:
  explicit StopSignals(const char* doing = "stopping after the work in flight");
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct Saved;
  Saved* saved_;
};

bool stop_requested();          // a SIGINT or SIGTERM arrived since the first StopSignals scope was installed
int stop_signal();              // that signal, or 0
std::string stop_signal_name(); // "SIGINT", "SIGTERM", or ""
int exit_code_for_stop();       // 128 + the signal (130, 143)

}  // namespace moe
