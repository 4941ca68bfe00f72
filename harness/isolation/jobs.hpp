// How many worker processes judge cases at once (`--jobs N|auto`) and with how many OpenMP threads each
// (`--job-threads T`), for run, selftest and calibrate (docs/reliability.md "Parallel workers").
//  - The run's CPUs: $OMP_NUM_THREADS when set (the thread budget the caller gives the whole run), else the CPUs
//    this process may run on (its affinity mask: taskset, a cgroup cpuset).
//  - `--jobs auto`: CPUs / kAutoThreadsPerJob workers, at least 1. Measured on the 2-core CPU machine (host nightly,
//    results/runs/2026-12-01-cpu-jobs/RUN.md): two workers of one thread each beat one worker of two threads,
//    because most of a case's time (generation, fingerprints, clones, judging) is memory-bound or single-threaded.
//  - Each worker's threads: `--job-threads T`, else CPUs / jobs (at least 1); with one worker and no --job-threads
//    the environment is left as it is (OpenMP's own default), as before parallel workers existed.
#pragma once

namespace moe {

inline constexpr int kAutoThreadsPerJob = 1;
inline constexpr int kMaxJobs = 256;

int run_cpus();
int auto_jobs();
// The OMP_NUM_THREADS a worker gets (0: leave the environment alone).
int threads_per_job(int jobs, int requested_threads);

}  // namespace moe
