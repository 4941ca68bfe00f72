// `moe-harness selftest`: proves the harness catches broken kernels without crying wolf (docs/judging.md).
//  - the clean kernel must pass every selftest case for N seeds (false alarms: none allowed for our criterion);
//  - each mutant (kernels/mutants) runs on the cases where it applies; where its output really differs from the
//    clean kernel's (a live case), our verdict must fail it, naming the check that caught it;
//  - a kernel that writes into the pristine tensors must surface as a harness error;
//  - the anchors' published criteria (verdict/anchor_criteria) are scored on the same outputs, side by side.
// --kernel gpu runs the same on the live GPU: the clean kernels and their mutant build (kernels/mutants), with the
// device required (a missing GPU fails the selftest, it never turns it into skips).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace moe {

struct SelftestOptions {
  std::string kernel = "host";     // host: the host contract kernel and its mutants; gpu: the GPU kernels' mutant build
  std::vector<std::string> suites;  // empty: selftest (host); selftest and selftest-gpu (gpu)
  int seeds = 20;
  std::filesystem::path json;  // optional machine-readable table
  bool isolation = true;       // each run in a worker process under the watchdog (harness/isolation/executor.hpp)
  std::optional<double> case_timeout_s;
  int jobs = 1;         // worker processes judging at once (--jobs; harness/isolation/jobs.hpp)
  int job_threads = 0;  // each worker's OpenMP threads (--job-threads); 0: the default for jobs
};

// 0: every mutant caught and no clean failure; 1 otherwise (also when --kernel gpu finds no GPU); bad input throws.
int run_selftest(const SelftestOptions& opt);

}  // namespace moe
