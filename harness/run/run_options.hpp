// What `moe-harness run` (and the API's Suite::run) is asked to do: suite, filters, kernels, seed, report places,
// the device requirement, isolation and the dispatch switches (harness/run/runner.hpp runs it).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/run/gating.hpp"
#include "kernels/gpu/dispatch_options.hpp"
#include "kernels/kernel_under_test.hpp"

namespace moe {

struct RunOptions {
  std::string suite = "smoke";
  std::vector<std::string> filters;  // glob patterns on case ids ('*', '?'); a leading '-' excludes
  std::vector<std::string> kernels;  // kernel ids; empty = every kernel available in this build (unless extra_kernels)
  // Kernels built by the caller (an external output file, a plugin); with `kernels` empty, only these run.
  std::vector<std::shared_ptr<KernelUnderTest>> extra_kernels;
  std::vector<std::string> plugins;  // plugin library paths (kernels/plugin/moe_plugin.h), judged like extra kernels
  std::optional<std::uint64_t> seed;
  // --sequence-seed: replaces a call sequence's `seed` (its shuffled step order; docs/judging.md "Call sequences").
  std::optional<std::uint64_t> sequence_seed;
  std::filesystem::path report_dir;  // default reports-out/<UTC timestamp>
  std::filesystem::path junit, json; // default inside report_dir
  DeviceRequirement device;
  std::filesystem::path reference_cache;  // empty: no cache (harness/pipeline/reference_cache.hpp)
  bool timing = true;                     // kernels time themselves after the verdict run (--no-timing: off)
  bool token_probes = true;               // harness/pipeline/token_probes.hpp (--no-token-probes: off)
  gpu::DispatchOptions dispatch;         // the GPU kernels' A/B switches (--dispatch)
  double host_budget = 0;            // 0: the host kernel's default
  std::vector<std::string> gtest_args;  // passed through to GoogleTest; one it does not know is bad input
  bool verbose = false;                 // GoogleTest's own log and a line per case (harness/run/progress.hpp)
  // Fault containment (harness/isolation/): cases judged in worker processes under a watchdog unless
  // --no-isolation; --case-timeout beats every case's limit; --resume DIR continues a run from its journal.
  bool isolation = true;
  std::optional<double> case_timeout_s;
  int jobs = 1;         // worker processes judging at once (--jobs; harness/isolation/jobs.hpp)
  int job_threads = 0;  // each worker's OpenMP threads (--job-threads); 0: the default for jobs
  std::filesystem::path resume;
  // `run --resume DIR` given the run's options on its command line too: they are re-derived as the run wrote them and
  // each must equal the journal's start line (harness/isolation/run_session.hpp); false: the journal's are used.
  bool resume_checks_options = false;
  // --dispatch-table: each case dispatches from its row of a tuned table set, the tables' paths ':'-separated in
  // set order (docs/tuning.md "Table sets"); empty: none.
  std::filesystem::path dispatch_table;
};

}  // namespace moe
