#include "harness/isolation/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <vector>

#include "fixtures/error.hpp"
#include "harness/isolation/worker.hpp"

extern char** environ;

namespace moe {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kTailBytes = 64 << 10;

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

// The supervisor's environment with OMP_NUM_THREADS replaced (threads > 0), built before fork: the child may only
// make async-signal-safe calls until exec.
std::vector<std::string> worker_environment(int threads) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e)
    if (threads <= 0 || std::strncmp(*e, "OMP_NUM_THREADS=", 16) != 0) env.emplace_back(*e);
  if (threads > 0) env.push_back("OMP_NUM_THREADS=" + std::to_string(threads));
  return env;
}

}  // namespace

std::string worker_tail_lines(const std::string& s) {
  std::size_t from = s.size(), lines = 0;
  if (from > 0 && s[from - 1] == '\n') --from;  // the final line end starts no line
  while (from > 0 && lines < std::size_t(kWorkerTailLines)) {
    const std::size_t nl = s.rfind('\n', from - 1);
    ++lines;
    from = nl == std::string::npos ? 0 : nl;
    if (nl == std::string::npos) break;
  }
  std::string t = s.substr(from == 0 ? 0 : from + 1);
  return json::parse(json(t).dump(-1, ' ', false, json::error_handler_t::replace)).get<std::string>();
}

WorkerProcess::~WorkerProcess() {
  if (pid_ < 0) return;
  close_fd(req_fd_);  // end of requests: the worker exits
  reap(false);
}

bool WorkerProcess::start(const std::string& config_line, int threads, double limit_s, json& ready, std::string& why) {
  int req[2], rec[2], err[2];
  make_pipe(req);
  make_pipe(rec);
  make_pipe(err);
  char arg0[] = "moe-harness", arg1[] = "__worker";
  char* argv[] = {arg0, arg1, nullptr};
  std::vector<std::string> env = worker_environment(threads);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {req[0], req[1], rec[0], rec[1], err[0], err[1]}) ::close(fd);
    why = std::string("fork failed: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    // Async-signal-safe calls only until exec. Its own process group: a terminal's Ctrl-C (SIGINT to the
    // foreground group) reaches the supervisor alone, which stops after the cases in flight.
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
    ::execve("/proc/self/exe", argv, envp.data());
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
  tail_.clear();

  if (!send(config_line)) {
    why = "the worker closed its request pipe at once: " + reap(true);
    return false;
  }
  std::string line;
  const auto deadline = Clock::now() + std::chrono::duration<double>(limit_s);
  while (!next_line(line)) {
    if (Clock::now() >= deadline) {
      reap(true);
      why = fmt::format("it did not report ready within {:.0f} s", limit_s);
      return false;
    }
    pollfd p[2] = {{rec_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    const int n = ::poll(p, err_fd_ >= 0 ? 2 : 1, 50);
    if (n > 0 && err_fd_ >= 0 && (p[1].revents & (POLLIN | POLLHUP))) read_stderr();
    if (n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) && !read_records() && !next_line(line)) {
      why = reap(false);
      return false;
    }
    if (!line.empty()) break;
  }
  try {
    ready = json::parse(line);
    (void)ready.at("type");
  } catch (const json::exception& e) {
    why = std::string("its first reply was unreadable (") + e.what() + ")";
    reap(true);
    return false;
  }
  if (ready.at("type") == "fatal") {
    why = ready.at("message").get<std::string>();
    reap(true);
    return false;
  }
  tail_.clear();
  return true;
}

bool WorkerProcess::send(const std::string& line) { return req_fd_ >= 0 && wire::write_line(req_fd_, line); }

bool WorkerProcess::read_records() { return records_ && records_->fill(); }

bool WorkerProcess::next_line(std::string& line) { return records_ && records_->next(line); }

void WorkerProcess::read_stderr() {
  if (err_fd_ < 0) return;
  char buf[16384];
  const ssize_t n = ::read(err_fd_, buf, sizeof buf);
  if (n <= 0) close_fd(err_fd_);
  else add_output(buf, std::size_t(n));
}

std::size_t WorkerProcess::resident_bytes() const {
  std::ifstream f("/proc/" + std::to_string(pid_) + "/statm");
  std::size_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * std::size_t(::sysconf(_SC_PAGESIZE));
}

std::string WorkerProcess::reap(bool kill_first) {
  if (pid_ < 0) return "no worker";
  if (kill_first) kill_group();
  int status = 0;
  const auto t0 = Clock::now();
  for (;;) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) break;
    if (Clock::now() - t0 > std::chrono::seconds(10)) {
      kill_group();
      ::waitpid(pid_, &status, 0);
      break;
    }
    ::usleep(2000);
  }
  drain_stderr(true);
  flush_echo();
  close_fd(req_fd_);
  close_fd(rec_fd_);
  close_fd(err_fd_);
  records_.reset();
  pid_ = -1;
  return describe_status(status);
}

void WorkerProcess::kill_group() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);  // the whole group: anything the kernel under test started goes too
  ::kill(pid_, SIGKILL);
}

void WorkerProcess::add_output(const char* p, std::size_t n) {
  if (n == 0) return;
  tail_.append(p, n);
  if (tail_.size() > kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
  echo_.append(p, n);  // echoed as it comes, whole lines only
  const std::size_t end = echo_.rfind('\n');
  if (end != std::string::npos) {
    (void)!::write(2, echo_.data(), end + 1);
    echo_.erase(0, end + 1);
  }
  if (echo_.size() > kTailBytes) flush_echo();  // a worker writing without line ends
}

void WorkerProcess::flush_echo() {
  if (echo_.empty()) return;
  (void)!::write(2, echo_.data(), echo_.size());
  echo_.clear();
}

void WorkerProcess::drain_stderr(bool until_eof) {
  const auto until = Clock::now() + std::chrono::seconds(1);  // a grandchild may hold the pipe open
  while (err_fd_ >= 0) {
    pollfd p{err_fd_, POLLIN, 0};
    if (::poll(&p, 1, until_eof ? 20 : 0) <= 0) {
      if (!until_eof || Clock::now() >= until) break;
      continue;
    }
    read_stderr();
  }
}

}  // namespace moe
