#include "harness/isolation/supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <fstream>

#include "fixtures/error.hpp"
#include "harness/isolation/case_limits.hpp"
#include "harness/isolation/worker.hpp"
#include "reports/record_json.hpp"

namespace moe {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr double kStartLimitS = 120;       // a worker builds its suites and kernels and detects the device
constexpr std::size_t kTailBytes = 64 << 10;
constexpr int kTailLines = 40;

// A pipe whose ends sit at fd 10 or above (so the child's dup2 onto 3 and 4 never clobbers one), close-on-exec.
void make_pipe(int fds[2]) {
  int raw[2];
  if (::pipe2(raw, O_CLOEXEC) != 0) throw_harness_error("supervisor", std::string("pipe2 failed: ") + std::strerror(errno));
  for (int i = 0; i < 2; ++i) {
    fds[i] = ::fcntl(raw[i], F_DUPFD_CLOEXEC, 10);
    ::close(raw[i]);
    if (fds[i] < 0) throw_harness_error("supervisor", std::string("fcntl failed: ") + std::strerror(errno));
  }
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::size_t resident_bytes(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/statm");
  std::size_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * std::size_t(::sysconf(_SC_PAGESIZE));
}

std::string describe_status(int status) {
  if (WIFEXITED(status))
    return fmt::format("exited with status {} before it returned a record (a kernel that calls exit()?)", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = ::sigabbrev_np(sig);
    std::string s = fmt::format("was killed by signal {} (SIG{}: {}{})", sig, abbrev ? abbrev : "?", ::strsignal(sig),
                                WCOREDUMP(status) ? ", core dumped" : "");
    if (sig == SIGKILL) s += " from outside the harness (the system's out-of-memory killer?)";
    return s;
  }
  return fmt::format("ended with wait status {:#x}", status);
}

// The last lines of a worker's output, as valid UTF-8 (the report is JSON).
std::string tail_lines(const std::string& s) {
  std::size_t from = s.size(), lines = 0;
  if (from > 0 && s[from - 1] == '\n') --from;  // the final line end starts no line
  while (from > 0 && lines < std::size_t(kTailLines)) {
    const std::size_t nl = s.rfind('\n', from - 1);
    ++lines;
    from = nl == std::string::npos ? 0 : nl;
    if (nl == std::string::npos) break;
  }
  std::string t = s.substr(from == 0 ? 0 : from + 1);
  return json::parse(json(t).dump(-1, ' ', false, json::error_handler_t::replace)).get<std::string>();
}

CaseRecord error_record(const CaseSpec& c, const KernelUnderTest& k, const std::string& check,
                        const std::string& reason, const std::string& err_tail) {
  CaseRecord r;
  r.id = c.id;
  r.kernel = k.id();
  r.source = c.source;
  r.status = "error";
  r.failed_check = check;
  r.reason = check + ": " + reason;
  const std::string tail = tail_lines(err_tail);
  r.details = tail.empty() ? "the worker wrote nothing to stdout or stderr while it judged this case"
                           : fmt::format("the worker's stdout and stderr while it judged this case (last {} lines at "
                                         "most):\n{}", kTailLines, tail);
  return r;
}

}  // namespace

Supervisor::Supervisor(ExecConfig config, const CaseContext& local, std::optional<double> case_timeout_s)
    : config_(std::move(config)), local_(local), case_timeout_s_(case_timeout_s) {
  // A worker that died leaves its request pipe without a reader: a write must fail, not kill the supervisor.
  ::signal(SIGPIPE, SIG_IGN);
}

Supervisor::~Supervisor() { stop_worker(); }

bool Supervisor::start_worker(std::string& why) {
  int req[2], rec[2], err[2];
  make_pipe(req);
  make_pipe(rec);
  make_pipe(err);
  char arg0[] = "moe-harness", arg1[] = "__worker";
  char* argv[] = {arg0, arg1, nullptr};
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {req[0], req[1], rec[0], rec[1], err[0], err[1]}) ::close(fd);
    why = std::string("fork failed: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    // Async-signal-safe calls only until exec. Its own process group: a terminal's Ctrl-C (SIGINT to the
    // foreground group) reaches the supervisor alone, which stops after the current case.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(req[0], kWorkerRequestFd);
    ::dup2(rec[1], kWorkerRecordFd);
    ::dup2(err[1], 1);
    ::dup2(err[1], 2);
    ::execv("/proc/self/exe", argv);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so that a kill of the group right after fork finds it
  ::close(req[0]);
  ::close(rec[1]);
  ::close(err[1]);
  pid_ = pid;
  req_fd_ = req[1];
  rec_fd_ = rec[0];
  err_fd_ = err[0];
  records_ = std::make_unique<wire::LineReader>(rec_fd_);
  ++started_;
  live_stats_ = {};
  cached_weight_bytes_ = 0;
  err_tail_.clear();

  std::string line;
  if (!wire::write_line(req_fd_, wire::to_json(config_).dump())) {
    why = "the worker closed its request pipe at once: " + reap(true);
    return false;
  }
  const Wait w = wait_line(line, kStartLimitS, 0);
  if (w != Wait::line) {
    why = w == Wait::timed_out ? fmt::format("it did not report ready within {:.0f} s", kStartLimitS) : reap(w != Wait::died);
    if (w == Wait::timed_out) reap(true);
    return false;
  }
  json j;
  try {
    j = json::parse(line);
    (void)j.at("type");
  } catch (const json::exception& e) {
    why = std::string("its first reply was unreadable (") + e.what() + ")";
    reap(true);
    return false;
  }
  if (j.at("type") == "fatal") {
    why = j.at("message").get<std::string>();
    reap(true);
    return false;
  }
  const json& ks = j.at("kernels");
  if (ks.size() != local_.kernels().size())
    throw_harness_error("supervisor", fmt::format("the worker built {} kernels, the supervisor {}", ks.size(),
                                                  local_.kernels().size()));
  for (std::size_t i = 0; i < ks.size(); ++i)
    if (ks[i].get<std::string>() != local_.kernels()[i]->id())
      throw_harness_error("supervisor", "the worker built kernel " + ks[i].get<std::string>() + " where the supervisor has " +
                                            local_.kernels()[i]->id());
  if (j.at("cases").get<std::size_t>() != local_.cases().size())
    throw_harness_error("supervisor", "the worker loaded another number of cases (did a suite file change during the run?)",
                        "leave the suite files alone while a run is going");
  if (!device_) device_ = wire::device_detection(j.at("device"));
  err_tail_.clear();
  return true;
}

void Supervisor::stop_worker() {
  if (pid_ < 0) return;
  close_fd(req_fd_);  // end of requests: the worker exits
  reap(false);
}

// Waits for the worker (killing it first, or when it does not exit within 10 s), drains what it wrote, closes
// the pipes, and says what became of it.
std::string Supervisor::reap(bool kill_first) {
  if (pid_ < 0) return "no worker";
  if (kill_first) kill_worker();
  int status = 0;
  const auto t0 = Clock::now();
  for (;;) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) break;
    if (Clock::now() - t0 > std::chrono::seconds(10)) {
      kill_worker();
      ::waitpid(pid_, &status, 0);
      break;
    }
    ::usleep(2000);
  }
  drain_stderr(true);
  finished_stats_.reference_hits += live_stats_.reference_hits;
  finished_stats_.reference_misses += live_stats_.reference_misses;
  finished_stats_.weight_disk_hits += live_stats_.weight_disk_hits;
  finished_stats_.weight_misses += live_stats_.weight_misses;
  live_stats_ = {};
  close_fd(req_fd_);
  close_fd(rec_fd_);
  close_fd(err_fd_);
  records_.reset();
  pid_ = -1;
  return describe_status(status);
}

void Supervisor::kill_worker() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);  // the whole group: anything the kernel under test started goes too
  ::kill(pid_, SIGKILL);
}

void Supervisor::add_stderr(const char* p, std::size_t n) {
  if (n == 0) return;
  (void)!::write(2, p, n);  // echoed as it comes
  err_tail_.append(p, n);
  if (err_tail_.size() > kTailBytes) err_tail_.erase(0, err_tail_.size() - kTailBytes);
}

void Supervisor::drain_stderr(bool until_eof) {
  const auto until = Clock::now() + std::chrono::seconds(1);  // a grandchild may hold the pipe open
  while (err_fd_ >= 0) {
    pollfd p{err_fd_, POLLIN, 0};
    if (::poll(&p, 1, until_eof ? 20 : 0) <= 0) {
      if (!until_eof || Clock::now() >= until) break;
      continue;
    }
    char buf[16384];
    const ssize_t n = ::read(err_fd_, buf, sizeof buf);
    if (n <= 0) { close_fd(err_fd_); break; }
    add_stderr(buf, std::size_t(n));
  }
}

Supervisor::Wait Supervisor::wait_line(std::string& line, double seconds, std::size_t memory_limit) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(std::min(seconds, 1e8));  // timeout_s: .inf
  auto next_memory_check = Clock::now();
  for (;;) {
    if (records_->next(line)) {
      drain_stderr(false);
      return Wait::line;
    }
    const auto now = Clock::now();
    if (now >= deadline) return Wait::timed_out;
    const int ms = int(std::min<double>(50.0, std::chrono::duration<double, std::milli>(deadline - now).count() + 1));
    pollfd p[2] = {{rec_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    const int n = ::poll(p, err_fd_ >= 0 ? 2 : 1, ms);
    if (n < 0 && errno != EINTR) return Wait::died;
    if (n > 0 && err_fd_ >= 0 && (p[1].revents & (POLLIN | POLLHUP))) {
      char buf[16384];
      const ssize_t r = ::read(err_fd_, buf, sizeof buf);
      if (r <= 0) close_fd(err_fd_);
      else add_stderr(buf, std::size_t(r));
    }
    if (n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
      if (!records_->fill()) return records_->next(line) ? Wait::line : Wait::died;
    if (memory_limit > 0 && Clock::now() >= next_memory_check) {
      next_memory_check = Clock::now() + std::chrono::milliseconds(50);
      const std::size_t rss = resident_bytes(pid_);
      resident_peak_ = std::max(resident_peak_, rss);
      if (rss > memory_limit) return Wait::over_memory;
    }
  }
}

const DeviceDetection& Supervisor::device() {
  if (!device_) {
    std::string why;
    if (!start_worker(why))
      throw_harness_error("supervisor", "the worker process could not start: " + why,
                          "run with --no-isolation to see the failure in process");
  }
  return *device_;
}

CaseResult Supervisor::execute(const CaseRequest& r) {
  const CaseSpec& c = local_.cases().at(r.case_index);
  const KernelUnderTest& k = *local_.kernels().at(r.kernel_index);
  CaseResult out;
  std::string why;
  if (pid_ < 0 && !start_worker(why)) {
    out.record = error_record(c, k, "crash", "the worker process could not start: " + why, err_tail_);
    return out;
  }
  err_tail_.clear();
  resident_peak_ = 0;
  const CaseLimit limit = case_time_limit(c, !k.needs_device(), case_timeout_s_);
  const MemoryLimit memory = case_memory_limit(c, cached_weight_bytes_);
  std::string line;
  const std::string request = wire::to_json(r).dump();
  if (!wire::write_line(req_fd_, request)) {  // the worker died between cases: this case has not run, start another
    reap(true);
    if (!start_worker(why) || !wire::write_line(req_fd_, request)) {
      out.record = error_record(c, k, "crash", "the worker process could not start: " + why, err_tail_);
      return out;
    }
  }
  const Wait w = wait_line(line, limit.seconds, memory.bytes);
  if (w == Wait::line) {
    std::string exit_after;
    try {
      const nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);  // ordered: the probes keep their order
      if (j.at("type") != "record") {  // the worker gave up on the request (its message says why)
        reap(true);
        out.record = error_record(c, k, "crash", "the worker failed: " + j.value("message", line), err_tail_);
        return out;
      }
      out.record = case_record_from_json(j.at("record"), "the worker's record", "record");
      out.ref = wire::hex_floats(j.at("ref"));
      out.out = wire::hex_floats(j.at("out"));
      live_stats_ = wire::exec_stats(j.at("stats"));
      cached_weight_bytes_ = j.at("cached_weight_bytes");
      exit_after = j.at("exit_after").get<std::string>();
    } catch (const std::exception& e) {  // a reply that is not the worker's (a kernel that wrote onto its pipe?)
      reap(true);
      out = {};
      out.record = error_record(c, k, "crash", std::string("the worker's reply was unreadable (") + e.what() +
                                                   "); the worker was killed and a new one judges the next case",
                                err_tail_);
      return out;
    }
    if (!exit_after.empty()) reap(false);  // a poisoned GPU context: it exits by itself
    return out;
  }
  if (w == Wait::timed_out) {
    reap(true);
    out.record = error_record(c, k, "timeout", fmt::format("the case ran past its time limit of {:.1f} s ({}); the "
                                                           "worker was killed and a new one judges the next case",
                                                           limit.seconds, limit.why), err_tail_);
  } else if (w == Wait::over_memory) {
    const std::size_t rss = resident_peak_;
    reap(true);
    out.record = error_record(c, k, "out_of_memory",
                              fmt::format("the worker's resident memory reached {:.2f} GiB, above this case's limit "
                                          "of {:.2f} GiB ({}); the worker was killed and a new one judges the next case",
                                          double(rss) / double(1 << 30), double(memory.bytes) / double(1 << 30), memory.why),
                              err_tail_);
  } else {
    const std::string what = reap(false);
    out.record = error_record(c, k, "crash", "the worker process judging this case " + what +
                                                 "; a new worker judges the next case", err_tail_);
  }
  return out;
}

ExecStats Supervisor::stats() const {
  ExecStats s = finished_stats_;
  s.reference_hits += live_stats_.reference_hits;
  s.reference_misses += live_stats_.reference_misses;
  s.weight_disk_hits += live_stats_.weight_disk_hits;
  s.weight_misses += live_stats_.weight_misses;
  return s;
}

}  // namespace moe
