// The supervisor side of isolation: up to `jobs` worker processes (worker_process.hpp) judging cases at once, fed
// from a queue of requests in submission order. Each case runs under a watchdog: its time limit (case_limits.hpp)
// and a memory limit on its worker's resident set. A worker that dies, overruns or overgrows costs that case one
// error record (failed_check crash, timeout or out_of_memory, the signal or exit status and the output tail in it);
// the next case on that worker slot starts a new worker, which rebuilds the suites and kernels and starts with an
// empty weight cache.
//
// Several workers (jobs > 1, docs/reliability.md "Parallel workers"):
//  - each gets OMP_NUM_THREADS = threads (the caller's choice; 0 leaves the environment as it is);
//  - memory: a case starts only while the memory limits of the cases in flight plus the weight caches of the idle
//    workers plus its own limit fit the host memory budget (fixtures/problem_sizes.hpp), or when nothing else is in
//    flight; so the watchdog's limits together never promise more memory than the machine has, and a large case
//    waits for the others to finish instead of meeting the system's out-of-memory killer;
//  - weights: each worker keeps the expert weights of its recent cases (its weight cache), so a free worker takes,
//    from the first kAffinityWindow queued requests, one whose weights it generated recently, else the first whose
//    weights no other worker holds, else the first: the cases of one checkpoint (a token sweep) stay on one worker
//    and are generated once, not once per worker. The records do not depend on which worker judges a case;
//  - the device lock (kernels/runtime/device_lock.hpp): granted to one worker at a time, first come first served;
//    the time a case waits for it is not counted against its time limit; a worker that ends while holding or
//    waiting for it gives it up.
// Single-threaded: the pipes of all workers are polled by whoever waits for a result (wait()).
#pragma once
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/isolation/case_context.hpp"
#include "harness/isolation/case_limits.hpp"
#include "harness/isolation/executor.hpp"
#include "harness/isolation/worker_process.hpp"

namespace moe {

class Supervisor {
 public:
  Supervisor(ExecConfig config, const CaseContext& local, const IsolationOptions& iso);
  ~Supervisor();
  const DeviceDetection& device();
  CaseExecutor::Ticket submit(const CaseRequest& r);
  // Judges queued requests and collects records until `t`'s exists; nullopt when `t` was dropped (hold_back).
  std::optional<CaseResult> wait(CaseExecutor::Ticket t);
  bool started(CaseExecutor::Ticket t) const;  // in flight or done
  void set_completion(CaseExecutor::Completion f) { completion_ = std::move(f); }
  // While it returns true no queued request starts, and the queued ones are dropped (SIGINT, SIGTERM); the cases
  // in flight get kStopGraceSeconds from the first time it said true, then their workers are killed and the cases
  // abandoned: no record, no completion call, wait() answers nullopt (harness/isolation/stop_signal.hpp).
  void set_hold_back(std::function<bool()> f) { hold_back_ = std::move(f); }
  const std::vector<std::string>& abandoned() const { return abandoned_; }  // "KERNEL CASE" of each
  ExecStats stats() const;
  std::size_t jobs() const { return slots_.size(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Slot {
    WorkerProcess proc;
    std::optional<CaseExecutor::Ticket> ticket;  // the case in flight
    CaseRequest request;
    Clock::time_point started, deadline, next_memory_check;
    CaseLimit limit;
    MemoryLimit memory;
    std::size_t resident_peak = 0, cached_weight_bytes = 0;
    bool waiting_for_device = false;
    Clock::time_point waiting_since;
    ExecStats live;
    std::deque<std::string> weights;  // the weights keys of its recent cases, the latest first
  };
  struct Queued {
    CaseExecutor::Ticket ticket;
    CaseRequest request;
    std::string weights;  // fixtures/checkpoint.hpp weights_key
  };
  static constexpr std::size_t kAffinityWindow = 64, kRecentWeights = 4;
  std::size_t choose(const Slot& s) const;  // the index into queue_ of the request s takes next
  bool start_worker(Slot& s, std::string& why);
  void reap(Slot& s, bool kill_first, std::string* what = nullptr);
  void dispatch();
  bool admissible(const Slot& s, const CaseRequest& r) const;
  void begin_case(Slot& s, const Queued& q);
  void step();  // one poll of every busy worker, with what it finds handled
  void handle_line(std::size_t i, const std::string& line);
  void finish(Slot& s, CaseResult res);
  void fail_case(Slot& s, Check check, const std::string& reason);
  bool stopping();            // hold_back said true; past the grace, the cases in flight are abandoned
  void abandon(Slot& s);
  void grant_device();
  void release_device(std::size_t i);

  ExecConfig config_;
  const CaseContext& local_;
  std::optional<double> case_timeout_s_;
  int threads_ = 0;
  std::size_t memory_budget_ = 0;
  std::vector<Slot> slots_;
  std::deque<Queued> queue_;
  std::set<CaseExecutor::Ticket> queued_;
  std::map<CaseExecutor::Ticket, CaseResult> done_;
  CaseExecutor::Ticket next_ticket_ = 0;
  std::optional<std::size_t> device_holder_;
  std::deque<std::size_t> device_waiters_;
  std::optional<DeviceDetection> device_;
  ExecStats finished_stats_;
  CaseExecutor::Completion completion_;
  std::function<bool()> hold_back_;
  std::optional<Clock::time_point> stop_seen_;
  std::vector<std::string> abandoned_;
};

}  // namespace moe
