#include "kernels/plugin/plugin_probe.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <string>
#include <thread>

#include "fixtures/error.hpp"

namespace moe {

double plugin_probe_seconds() {
  const char* v = std::getenv("MOE_PLUGIN_LOAD_TIMEOUT");
  if (!v) return kPluginProbeSeconds;
  char* end = nullptr;
  errno = 0;
  const double s = std::strtod(v, &end);
  if (!*v || *end || errno != 0 || !std::isfinite(s) || s <= 0 || s > 3600)
    throw_bad_input("environment", "MOE_PLUGIN_LOAD_TIMEOUT", fmt::format("'{}' is not a number of seconds in (0, 3600]", v),
                    fmt::format("set it to the seconds a plugin's loading may take, or unset it (default {:g})",
                                kPluginProbeSeconds));
  return s;
}

std::optional<PluginLoadFailure> probe_plugin_load(const std::filesystem::path& path) {
  const std::string where = path.string();
  const double limit_s = plugin_probe_seconds();
  // The probe says "loading returned" by a byte on a pipe, not by its exit status: a constructor that calls exit(0)
  // ends the probe with 0 too, and must not pass for a library that loads.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw_harness_error(where, std::string("cannot create the plugin probe's pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // a constructor's exit() in the probe flushes its copy of the stdio buffers
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw_harness_error(where, std::string("cannot fork the plugin probe: ") + std::strerror(errno),
                        "free memory or processes and rerun");
  }
  if (pid == 0) {
    // The probe: load, and say whether that returned. dlopen's failure is the loader's to report (its dlerror
    // text), so it counts as having returned; _exit skips every destructor and atexit handler. It dies with the
    // process that started it (a hang outlives nothing).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::close(fds[0]);
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    (void)h;
    const char loaded = 'L';
    (void)!::write(fds[1], &loaded, 1);
    ::_exit(0);
  }
  ::close(fds[1]);
  struct Fd {
    int fd;
    ~Fd() { ::close(fd); }
  } read_end{fds[0]};
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR)
      throw_harness_error(where, std::string("waiting for the plugin probe failed: ") + std::strerror(errno));
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return PluginLoadFailure{true, fmt::format("did not return within {:g} s (a constructor that hangs; the probe "
                                                 "was killed)", limit_s)};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  char byte = 0;
  ssize_t got;
  while ((got = ::read(read_end.fd, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (got == 1 && byte == 'L' && WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::nullopt;
  if (WIFEXITED(status))
    return PluginLoadFailure{false, fmt::format("exited the process with status {}{}", WEXITSTATUS(status),
                                                WEXITSTATUS(status) == 0 ? " before dlopen returned" : "")};
  const char* abbrev = ::sigabbrev_np(WTERMSIG(status));
  return PluginLoadFailure{false, fmt::format("killed the process with signal {} (SIG{}: {})", WTERMSIG(status),
                                              abbrev ? abbrev : "?", ::strsignal(WTERMSIG(status)))};
}

}  // namespace moe
