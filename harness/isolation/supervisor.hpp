// The supervisor side of isolation: one worker process at a time (the harness binary in worker mode, started with
// fork + exec of /proc/self/exe in its own process group, killed with the supervisor by PR_SET_PDEATHSIG), requests
// on a pipe, records back as JSON lines on another, stdout and stderr on a third (echoed here; the last lines kept
// for a crash record). Each case runs under a watchdog: its time limit (case_limits.hpp) and a memory limit on the
// worker's resident set. A worker that dies, overruns or overgrows costs that case one error record (failed_check
// crash, timeout or out_of_memory, the signal or exit status and the stderr tail in it); the next case starts a new
// worker, which rebuilds the suites and kernels and starts with an empty weight cache.
#pragma once
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "harness/isolation/case_context.hpp"
#include "harness/isolation/executor.hpp"
#include "harness/isolation/wire.hpp"

namespace moe {

class Supervisor {
 public:
  Supervisor(ExecConfig config, const CaseContext& local, std::optional<double> case_timeout_s);
  ~Supervisor();
  const DeviceDetection& device();
  CaseResult execute(const CaseRequest& r);
  ExecStats stats() const;
  std::size_t workers_started() const { return started_; }

 private:
  enum class Wait { line, died, timed_out, over_memory };
  bool start_worker(std::string& why);
  void stop_worker();
  void kill_worker();
  std::string reap(bool kill_first);  // waits for the worker; what became of it, in words
  Wait wait_line(std::string& line, double seconds, std::size_t memory_limit);
  void drain_stderr(bool until_eof);  // until_eof: the worker has ended (bounded: 1 s)
  void add_stderr(const char* p, std::size_t n);

  ExecConfig config_;
  const CaseContext& local_;
  std::optional<double> case_timeout_s_;
  pid_t pid_ = -1;
  int req_fd_ = -1, rec_fd_ = -1, err_fd_ = -1;
  std::unique_ptr<wire::LineReader> records_;
  std::string err_tail_;  // this case's stderr, the last 64 KiB
  std::optional<DeviceDetection> device_;
  ExecStats finished_stats_, live_stats_;
  std::size_t cached_weight_bytes_ = 0, resident_peak_ = 0, started_ = 0;
};

}  // namespace moe
