// Parallel workers without processes: the worker's half of the device lock over its pipes, and the thread and job
// counts of --jobs / --job-threads (harness/isolation/jobs.hpp), by hand.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "harness/isolation/jobs.hpp"
#include "harness/isolation/wire.hpp"
#include "harness/isolation/worker.hpp"
#include "kernels/runtime/device_lock.hpp"

namespace moe {
namespace {

// Sets an environment variable for one scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DeviceLock, AGuardAsksTheSupervisorBlocksUntilTheGrantAndReleases) {
  int req[2], rec[2];
  ASSERT_EQ(::pipe(req), 0);
  ASSERT_EQ(::pipe(rec), 0);
  wire::LineReader in(req[0]);
  install_device_lock(supervisor_device_lock(in, rec[1]));
  std::atomic<bool> granted{false};
  std::string asked, released;
  std::thread supervisor([&] {
    wire::LineReader from_worker(rec[0]);
    from_worker.read_line(asked);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    granted = true;
    wire::write_line(req[1], R"({"type":"device_granted"})");
    from_worker.read_line(released);
  });
  {
    const DeviceLockGuard guard;
    EXPECT_TRUE(granted.load());  // the guard returned only after the grant
    EXPECT_EQ(asked, R"({"type":"device","op":"acquire"})");
  }
  supervisor.join();
  EXPECT_EQ(released, R"({"type":"device","op":"release"})");
  install_device_lock({});
  { const DeviceLockGuard none; }  // no hooks (one worker, in process): nothing is sent, nothing blocks
  for (int fd : {req[0], req[1], rec[0], rec[1]}) ::close(fd);
}

TEST(Jobs, ThreadsAreTheRunsCpusSplitOverTheWorkers) {
  const ScopedEnv six("OMP_NUM_THREADS", "6");  // the run's thread budget when set
  EXPECT_EQ(run_cpus(), 6);
  EXPECT_EQ(auto_jobs(), 6 / kAutoThreadsPerJob);
  EXPECT_EQ(threads_per_job(1, 0), 0);  // one worker: the environment is left alone
  EXPECT_EQ(threads_per_job(2, 0), 3);
  EXPECT_EQ(threads_per_job(4, 0), 1);   // 6 / 4, rounded down
  EXPECT_EQ(threads_per_job(8, 0), 1);   // never 0
  EXPECT_EQ(threads_per_job(4, 5), 5);   // --job-threads wins
  EXPECT_EQ(threads_per_job(1, 2), 2);
}

TEST(Jobs, WithoutOmpNumThreadsTheAffinityMaskCounts) {
  const ScopedEnv unset("OMP_NUM_THREADS", nullptr);
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_EQ(run_cpus(), CPU_COUNT(&set));
}

}  // namespace
}  // namespace moe
