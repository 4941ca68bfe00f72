#include "kernels/plugin/plugin_probe.hpp"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <string>
#include <thread>

#include "fixtures/error.hpp"

namespace moe {

void probe_plugin_load(const std::filesystem::path& path) {
  const std::string where = path.string();
  const pid_t pid = ::fork();
  if (pid < 0)
    throw_harness_error(where, std::string("cannot fork the plugin probe: ") + std::strerror(errno),
                        "free memory or processes and rerun");
  if (pid == 0) {
    // The probe: load, and say by the exit status whether that returned. dlopen's failure is the loader's to report
    // (its dlerror text), so it counts as having returned; _exit skips every destructor and atexit handler.
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    (void)h;
    ::_exit(0);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kPluginProbeSeconds);
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR)
      throw_harness_error(where, std::string("waiting for the plugin probe failed: ") + std::strerror(errno));
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      throw_bad_input(where, "--plugin",
                      fmt::format("loading the library did not return within {} s (a constructor that hangs)",
                                  kPluginProbeSeconds),
                      "fix the library's load-time code (ELF constructors, static initializers)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  const std::string how = WIFEXITED(status)
                              ? fmt::format("exited the process with status {}", WEXITSTATUS(status))
                              : fmt::format("killed the process with signal {} ({})", WTERMSIG(status),
                                            ::strsignal(WTERMSIG(status)));
  throw_bad_input(where, "--plugin", "loading the library " + how + " (its load-time code ran in a probe process)",
                  "fix the library's load-time code (ELF constructors, static initializers): loading must return");
}

}  // namespace moe
