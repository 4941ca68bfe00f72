#include "harness/isolation/supervisor.hpp"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>

#include "fixtures/error.hpp"
#include "fixtures/checkpoint.hpp"
#include "fixtures/problem_sizes.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/isolation/stop_signal.hpp"
#include "reports/record_json.hpp"

namespace moe {
namespace {

using nlohmann::json;

constexpr double kStartLimitS = 120;  // a worker builds its suites and kernels and detects the device

CaseRecord error_record(const CaseSpec& c, const KernelUnderTest& k, Check check, const std::string& reason,
                        const std::string& output) {
  CaseRecord r;
  r.id = c.id;
  r.kernel = k.id();
  r.source = c.source;
  r.status = Status::error;
  r.failed_check = check;
  r.reason = to_string(check) + ": " + reason;
  const std::string tail = worker_tail_lines(output);
  r.details = tail.empty() ? "the worker wrote nothing to stdout or stderr while it judged this case"
                           : fmt::format("the worker's stdout and stderr while it judged this case (last {} lines at "
                                         "most):\n{}", kWorkerTailLines, tail);
  return r;
}

void add(ExecStats& to, const ExecStats& s) {
  to.reference_hits += s.reference_hits;
  to.reference_misses += s.reference_misses;
  to.weight_disk_hits += s.weight_disk_hits;
  to.weight_misses += s.weight_misses;
}

}  // namespace

Supervisor::Supervisor(ExecConfig config, const CaseContext& local, const IsolationOptions& iso)
    : config_(std::move(config)), local_(local), case_timeout_s_(iso.case_timeout_s), threads_(iso.threads) {
  // A worker that died leaves its request pipe without a reader: a write must fail, not kill the supervisor.
  ::signal(SIGPIPE, SIG_IGN);
  std::size_t jobs = std::size_t(std::max(1, iso.jobs));
  if (jobs > 1) {
    const HostMemoryBudget budget = host_memory_budget();
    memory_budget_ = std::size_t(budget.bytes);
    const std::size_t fit = std::max<std::size_t>(1, memory_budget_ / kWorkerBaseMemoryBytes);
    if (jobs > fit) {
      std::fprintf(stderr, "moe-harness: --jobs %zu: the host memory budget (%.1f GiB, %s) holds the memory limits of "
                   "%zu workers at most (each case's limit is %.0f GiB or more); running %zu workers\n", jobs,
                   double(memory_budget_) / double(1 << 30), budget.source.c_str(), fit,
                   double(kWorkerBaseMemoryBytes) / double(1 << 30), fit);
      jobs = fit;
    }
    config_.device_lock = jobs > 1;
  }
  slots_ = std::vector<Slot>(jobs);
}

Supervisor::~Supervisor() = default;  // each WorkerProcess ends its worker

bool Supervisor::start_worker(Slot& s, std::string& why) {
  json ready;
  if (!s.proc.start(wire::to_json(config_).dump(), threads_, kStartLimitS, ready, why)) return false;
  s.live = {};
  s.cached_weight_bytes = 0;
  const json& ks = ready.at("kernels");
  if (ks.size() != local_.kernels().size())
    throw_harness_error("supervisor", fmt::format("the worker built {} kernels, the supervisor {}", ks.size(),
                                                  local_.kernels().size()));
  for (std::size_t i = 0; i < ks.size(); ++i)
    if (ks[i].get<std::string>() != local_.kernels()[i]->id())
      throw_harness_error("supervisor", "the worker built kernel " + ks[i].get<std::string>() + " where the supervisor has " +
                                            local_.kernels()[i]->id());
  if (ready.at("cases").get<std::size_t>() != local_.cases().size())
    throw_harness_error("supervisor", "the worker loaded another number of cases (did a suite file change during the run?)",
                        "leave the suite files alone while a run is going");
  if (!device_) device_ = wire::device_detection(ready.at("device"));
  return true;
}

void Supervisor::reap(Slot& s, bool kill_first, std::string* what) {
  const std::string w = s.proc.reap(kill_first);
  if (what) *what = w;
  add(finished_stats_, s.live);
  s.live = {};
  s.cached_weight_bytes = 0;
  s.weights.clear();  // a new worker starts with an empty weight cache
  release_device(std::size_t(&s - slots_.data()));
}

const DeviceDetection& Supervisor::device() {
  if (!device_) {
    std::string why;
    if (!slots_[0].proc.running() && !start_worker(slots_[0], why))
      throw_harness_error("supervisor", "the worker process could not start: " + why,
                          "run with --no-isolation to see the failure in process");
  }
  return *device_;
}

CaseExecutor::Ticket Supervisor::submit(const CaseRequest& r) {
  std::string weights;
  try {
    weights = weights_key(case_problem(local_.cases().at(r.case_index), r.seed));
  } catch (const Error&) {
    // a case whose problem cannot be built fails in its worker, with the reason; it has no weights to share
  }
  queue_.push_back({next_ticket_, r, std::move(weights)});
  queued_.insert(next_ticket_);
  return next_ticket_++;
}

bool Supervisor::started(CaseExecutor::Ticket t) const {
  if (done_.count(t)) return true;
  return std::any_of(slots_.begin(), slots_.end(), [t](const Slot& s) { return s.ticket == t; });
}

std::optional<CaseResult> Supervisor::wait(CaseExecutor::Ticket t) {
  for (;;) {
    const auto it = done_.find(t);
    if (it != done_.end()) {
      CaseResult res = std::move(it->second);
      done_.erase(it);
      return res;
    }
    stopping();
    dispatch();
    if (!queued_.count(t) && !started(t)) return std::nullopt;  // dropped, abandoned, or never submitted
    step();
  }
}

bool Supervisor::stopping() {
  if (!hold_back_ || !hold_back_()) return false;
  if (!stop_seen_) stop_seen_ = Clock::now();
  if (Clock::now() - *stop_seen_ >= std::chrono::duration<double>(kStopGraceSeconds))
    for (Slot& s : slots_)
      if (s.ticket) abandon(s);
  return true;
}

void Supervisor::abandon(Slot& s) {
  const CaseSpec& c = local_.cases().at(s.request.case_index);
  abandoned_.push_back(local_.kernels().at(s.request.kernel_index)->id() + " " + c.id);
  std::fprintf(stderr, "moe-harness: %s %s: abandoned in flight after %.1f s (stop signal); not judged\n",
               local_.kernels().at(s.request.kernel_index)->id().c_str(), c.id.c_str(),
               std::chrono::duration<double>(Clock::now() - s.started).count());
  if (s.proc.running()) reap(s, true);
  s.ticket.reset();
  s.waiting_for_device = false;
}

bool Supervisor::admissible(const Slot& s, const CaseRequest& r) const {
  std::size_t in_use = 0;
  bool others = false;
  for (const Slot& o : slots_) {
    if (&o == &s) continue;
    if (o.ticket) {
      in_use += o.memory.bytes;
      others = true;
    } else if (o.proc.running()) {
      in_use += o.cached_weight_bytes;
    }
  }
  return !others || in_use + case_memory_limit(local_.cases().at(r.case_index), s.cached_weight_bytes).bytes <= memory_budget_;
}

void Supervisor::dispatch() {
  if (hold_back_ && hold_back_()) {
    queue_.clear();
    queued_.clear();
    return;
  }
  for (Slot& s : slots_) {
    if (queue_.empty()) return;
    if (s.ticket) continue;
    const std::size_t pick = choose(s);
    if (!admissible(s, queue_[pick].request)) return;  // it waits until memory frees up
    const Queued q = std::move(queue_[pick]);
    queue_.erase(queue_.begin() + std::ptrdiff_t(pick));
    queued_.erase(q.ticket);
    begin_case(s, q);
  }
}

std::size_t Supervisor::choose(const Slot& s) const {
  if (slots_.size() == 1) return 0;  // one worker: in order, its cache serves each case that follows
  const std::size_t window = std::min(queue_.size(), kAffinityWindow);
  for (const std::string& w : s.weights)
    for (std::size_t i = 0; i < window; ++i)
      if (queue_[i].weights == w) return i;
  auto held_elsewhere = [&](const std::string& w) {
    for (const Slot& o : slots_)
      if (&o != &s && o.proc.running() && std::find(o.weights.begin(), o.weights.end(), w) != o.weights.end())
        return true;
    return false;
  };
  for (std::size_t i = 0; i < window; ++i)
    if (queue_[i].weights.empty() || !held_elsewhere(queue_[i].weights)) return i;
  return 0;
}

void Supervisor::begin_case(Slot& s, const Queued& q) {
  const CaseRequest& r = q.request;
  const CaseSpec& c = local_.cases().at(r.case_index);
  const KernelUnderTest& k = *local_.kernels().at(r.kernel_index);
  s.ticket = q.ticket;
  s.request = r;
  s.started = Clock::now();
  s.resident_peak = 0;
  s.waiting_for_device = false;
  if (auto rec = unloadable_plugin_record(c, k)) {  // nothing to judge, no worker needed: its loading failed
    CaseResult res;
    res.record = std::move(*rec);
    finish(s, std::move(res));
    return;
  }
  std::string why;
  if (!s.proc.running() && !start_worker(s, why)) {
    if (hold_back_ && hold_back_()) return abandon(s);  // a stop signal during the start: not the case's fault
    fail_case(s, Check::crash, "the worker process could not start: " + why);
    return;
  }
  s.proc.clear_tail();
  const std::string request = wire::to_json(r).dump();
  if (!s.proc.send(request)) {  // the worker died between cases: this case has not run, start another
    reap(s, true);
    if (!start_worker(s, why) || !s.proc.send(request)) {
      fail_case(s, Check::crash, "the worker process could not start: " + why);
      return;
    }
  }
  if (!q.weights.empty()) {
    s.weights.erase(std::remove(s.weights.begin(), s.weights.end(), q.weights), s.weights.end());
    s.weights.push_front(q.weights);
    if (s.weights.size() > kRecentWeights) s.weights.pop_back();
  }
  s.limit = case_time_limit(c, !k.needs_device(), case_timeout_s_);
  s.memory = case_memory_limit(c, s.cached_weight_bytes);
  s.started = s.next_memory_check = Clock::now();
  s.deadline = s.started + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(std::min(s.limit.seconds, 1e8)));  // timeout_s: .inf
}

void Supervisor::step() {
  std::vector<pollfd> fds;
  std::vector<std::size_t> owner;
  double wait_ms = 50;
  const auto now = Clock::now();
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (!s.ticket) continue;
    for (int fd : {s.proc.record_fd(), s.proc.stderr_fd()})
      if (fd >= 0) {
        fds.push_back({fd, POLLIN, 0});
        owner.push_back(i);
      }
    if (!s.waiting_for_device)
      wait_ms = std::min(wait_ms, std::chrono::duration<double, std::milli>(s.deadline - now).count() + 1);
  }
  if (fds.empty()) return;
  const int n = ::poll(fds.data(), fds.size(), int(std::max(0.0, wait_ms)));
  if (n < 0 && errno != EINTR) throw_harness_error("supervisor", std::string("poll failed: ") + std::strerror(errno));
  std::vector<bool> ended(slots_.size(), false);
  for (std::size_t f = 0; n > 0 && f < fds.size(); ++f) {
    Slot& s = slots_[owner[f]];
    if (fds[f].fd == s.proc.stderr_fd() && (fds[f].revents & (POLLIN | POLLHUP))) s.proc.read_stderr();
    if (fds[f].fd == s.proc.record_fd() && (fds[f].revents & (POLLIN | POLLHUP | POLLERR)) && !s.proc.read_records())
      ended[owner[f]] = true;
  }
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    std::string line;
    while (s.ticket && s.proc.next_line(line)) {
      s.proc.drain_stderr(false);
      handle_line(i, line);
    }
    if (!s.ticket) continue;
    if (ended[i] && hold_back_ && hold_back_()) {
      abandon(s);  // a stop signal that reached the worker too (a runner that signals the whole process tree)
    } else if (ended[i]) {
      std::string what;
      reap(s, false, &what);
      fail_case(s, Check::crash, "the worker process judging this case " + what + "; a new worker judges the next case");
    } else if (!s.waiting_for_device && Clock::now() >= s.deadline) {
      reap(s, true);
      fail_case(s, Check::timeout, fmt::format("the case ran past its time limit of {:.1f} s ({}); the worker was "
                                               "killed and a new one judges the next case", s.limit.seconds, s.limit.why));
    } else if (Clock::now() >= s.next_memory_check) {
      s.next_memory_check = Clock::now() + std::chrono::milliseconds(50);
      const std::size_t rss = s.proc.resident_bytes();
      s.resident_peak = std::max(s.resident_peak, rss);
      if (rss > s.memory.bytes) {
        reap(s, true);
        fail_case(s, Check::out_of_memory,
                  fmt::format("the worker's resident memory reached {:.2f} GiB, above this case's limit of {:.2f} GiB "
                              "({}); the worker was killed and a new one judges the next case",
                              double(s.resident_peak) / double(1 << 30), double(s.memory.bytes) / double(1 << 30),
                              s.memory.why));
      }
    }
  }
}

void Supervisor::handle_line(std::size_t i, const std::string& line) {
  Slot& s = slots_[i];
  CaseResult res;
  std::string exit_after;
  try {
    const nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);  // ordered: the probes keep their order
    if (j.at("type") == "device") {  // the device lock (kernels/runtime/device_lock.hpp)
      if (j.at("op") == "acquire" && device_holder_ != i) {
        s.waiting_for_device = true;
        s.waiting_since = Clock::now();
        device_waiters_.push_back(i);
        grant_device();
      } else if (j.at("op") == "release") {
        release_device(i);
      }
      return;
    }
    if (j.at("type") != "record") {  // the worker gave up on the request (its message says why)
      reap(s, true);
      fail_case(s, Check::crash, "the worker failed: " + j.value("message", line));
      return;
    }
    res.record = case_record_from_json(j.at("record"), "the worker's record", "record");
    res.ref = wire::hex_floats(j.at("ref"));
    res.out = wire::hex_floats(j.at("out"));
    s.live = wire::exec_stats(j.at("stats"));
    s.cached_weight_bytes = j.at("cached_weight_bytes");
    exit_after = j.at("exit_after").get<std::string>();
  } catch (const std::exception& e) {  // a reply that is not the worker's (a kernel that wrote onto its pipe?)
    reap(s, true);
    fail_case(s, Check::crash, std::string("the worker's reply was unreadable (") + e.what() +
                                   "); the worker was killed and a new one judges the next case");
    return;
  }
  if (!exit_after.empty()) reap(s, false);  // a poisoned GPU context: it exits by itself
  release_device(i);                         // a record ends the case's hold, whatever the kernel did
  res.seconds = std::chrono::duration<double>(Clock::now() - s.started).count();
  finish(s, std::move(res));
}

void Supervisor::fail_case(Slot& s, Check check, const std::string& reason) {
  const CaseSpec& c = local_.cases().at(s.request.case_index);
  const KernelUnderTest& k = *local_.kernels().at(s.request.kernel_index);
  CaseResult res;
  res.record = error_record(c, k, check, reason, s.proc.tail());
  res.seconds = std::chrono::duration<double>(Clock::now() - s.started).count();
  finish(s, std::move(res));
}

void Supervisor::finish(Slot& s, CaseResult res) {
  const CaseExecutor::Ticket t = *s.ticket;
  s.ticket.reset();
  s.waiting_for_device = false;
  if (completion_) completion_(t, res);
  done_.emplace(t, std::move(res));
}

void Supervisor::grant_device() {
  while (!device_holder_ && !device_waiters_.empty()) {
    const std::size_t j = device_waiters_.front();
    device_waiters_.pop_front();
    Slot& s = slots_[j];
    if (!s.ticket || !s.waiting_for_device) continue;
    s.waiting_for_device = false;
    s.deadline += Clock::now() - s.waiting_since;  // the wait is not the case's own time
    device_holder_ = j;
    s.proc.send(R"({"type":"device_granted"})");  // a worker gone meanwhile shows as its end in step()
  }
}

void Supervisor::release_device(std::size_t i) {
  device_waiters_.erase(std::remove(device_waiters_.begin(), device_waiters_.end(), i), device_waiters_.end());
  if (device_holder_ == i) {
    device_holder_.reset();
    grant_device();
  }
}

ExecStats Supervisor::stats() const {
  ExecStats s = finished_stats_;
  for (const Slot& slot : slots_) add(s, slot.live);
  return s;
}

}  // namespace moe
