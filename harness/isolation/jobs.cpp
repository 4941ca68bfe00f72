#include "harness/isolation/jobs.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>

namespace moe {

int run_cpus() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    const int n = std::atoi(env);  // OpenMP reads a list ("4,2") by its first number too
    if (n > 0) return n;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

int auto_jobs() { return std::clamp(run_cpus() / kAutoThreadsPerJob, 1, kMaxJobs); }

int threads_per_job(int jobs, int requested_threads) {
  if (requested_threads > 0) return requested_threads;
  if (jobs <= 1) return 0;
  return std::max(1, run_cpus() / jobs);
}

}  // namespace moe
