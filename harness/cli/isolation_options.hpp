// The options run, selftest and calibrate share for how cases are executed: --no-isolation, --case-timeout, --jobs
// and --job-threads (docs/reliability.md "What is isolated", "Parallel workers"). Read after parsing with apply(),
// into any options struct with `isolation`, `case_timeout_s`, `jobs` and `job_threads`.
#pragma once
#include <memory>
#include <CLI/CLI.hpp>

#include "fixtures/error.hpp"
#include "harness/cli/number_checks.hpp"
#include "harness/isolation/case_limits.hpp"
#include "harness/isolation/jobs.hpp"

namespace moe::cli {

class IsolationOptions {
 public:
  explicit IsolationOptions(CLI::App* cmd) {
    cmd->add_flag("--no-isolation", *no_isolation_,
                  "judge every case in this process (for a debugger): no crash containment, no watchdog");
    timeout_opt_ = cmd->add_option("--case-timeout", *timeout_,
                                   "seconds each run of a case may take (beats the case's timeout_s and the default)")
                       ->transform(positive_real(kMaxCaseTimeoutS));
    const CLI::Validator count = count_in(1, kMaxJobs);
    cmd->add_option("--jobs", *jobs_,
                    "worker processes judging cases at once, or auto (the CPUs / " + std::to_string(kAutoThreadsPerJob) +
                        "); default 1")
        ->check(CLI::Validator(
            [count](std::string& s) { return s == "auto" ? std::string() : count(s); }, "INT|auto", "jobs"));
    threads_opt_ = cmd->add_option("--job-threads", *threads_,
                                   "OpenMP threads of each worker (default: the CPUs / --jobs; with one worker, "
                                   "the environment's)")
                       ->transform(count_in(1, 4096));
  }
  template <class Options>
  void apply(Options& o) const {
    o.isolation = !*no_isolation_;
    if (*timeout_opt_) o.case_timeout_s = *timeout_;
    o.jobs = *jobs_ == "auto" ? auto_jobs() : std::stoi(*jobs_);
    if (*threads_opt_) o.job_threads = *threads_;
    if (!o.isolation && o.jobs > 1)
      throw_bad_input("command line", "--jobs", "several workers need isolation (--no-isolation judges in process)",
                      "drop --no-isolation, or use --jobs 1");
  }

 private:
  std::shared_ptr<bool> no_isolation_ = std::make_shared<bool>(false);
  std::shared_ptr<double> timeout_ = std::make_shared<double>(0);
  std::shared_ptr<std::string> jobs_ = std::make_shared<std::string>("1");
  std::shared_ptr<int> threads_ = std::make_shared<int>(0);
  CLI::Option* timeout_opt_ = nullptr;
  CLI::Option* threads_opt_ = nullptr;
};

}  // namespace moe::cli
