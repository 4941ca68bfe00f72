#include "harness/isolation/stop_signal.hpp"

#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

namespace moe {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
int g_scopes = 0;
char g_doing[160] = "stopping after the work in flight";

void put(const char* s) { (void)!::write(2, s, std::strlen(s)); }

void on_stop_signal(int sig) {
  g_stop_signal = sig;
  put(sig == SIGINT ? "\nmoe-harness: SIGINT: " : "\nmoe-harness: SIGTERM: ");
  put(g_doing);
  put(" (again to stop at once)\n");
}

}  // namespace

struct StopSignals::Saved {
  struct sigaction old_int {}, old_term {};
  char old_doing[sizeof g_doing];
};

StopSignals::StopSignals(const char* doing) : saved_(new Saved) {
  std::memcpy(saved_->old_doing, g_doing, sizeof g_doing);
  std::strncpy(g_doing, doing, sizeof g_doing - 1);
  g_doing[sizeof g_doing - 1] = '\0';
  if (g_scopes++ == 0) g_stop_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  // A second signal stops at once (the default action); a read or write the signal lands in goes on (SA_RESTART):
  // a report being written must not fail with EINTR.
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  ::sigaction(SIGINT, &sa, &saved_->old_int);
  ::sigaction(SIGTERM, &sa, &saved_->old_term);
}

StopSignals::~StopSignals() {
  ::sigaction(SIGINT, &saved_->old_int, nullptr);
  ::sigaction(SIGTERM, &saved_->old_term, nullptr);
  std::memcpy(g_doing, saved_->old_doing, sizeof g_doing);
  --g_scopes;
  delete saved_;
}

bool stop_requested() { return g_stop_signal != 0; }

int stop_signal() { return int(g_stop_signal); }

std::string stop_signal_name() {
  return g_stop_signal == SIGINT ? "SIGINT" : g_stop_signal == SIGTERM ? "SIGTERM" : "";
}

int exit_code_for_stop() { return 128 + int(g_stop_signal); }

}  // namespace moe
