// The options run, selftest and calibrate share for how cases are executed: --no-isolation and --case-timeout
// (docs/reliability.md "What is isolated"). Read after parsing with apply(), into any options struct with
// `isolation` and `case_timeout_s`.
#pragma once
#include <memory>
#include <CLI/CLI.hpp>

#include "harness/cli/number_checks.hpp"
#include "harness/isolation/case_limits.hpp"

namespace moe::cli {

class IsolationOptions {
 public:
  explicit IsolationOptions(CLI::App* cmd) {
    cmd->add_flag("--no-isolation", *no_isolation_,
                  "judge every case in this process (for a debugger): no crash containment, no watchdog");
    timeout_opt_ = cmd->add_option("--case-timeout", *timeout_,
                                   "seconds each run of a case may take (beats the case's timeout_s and the default)")
                       ->transform(positive_real(kMaxCaseTimeoutS));
  }
  template <class Options>
  void apply(Options& o) const {
    o.isolation = !*no_isolation_;
    if (*timeout_opt_) o.case_timeout_s = *timeout_;
  }

 private:
  std::shared_ptr<bool> no_isolation_ = std::make_shared<bool>(false);
  std::shared_ptr<double> timeout_ = std::make_shared<double>(0);
  CLI::Option* timeout_opt_ = nullptr;
};

}  // namespace moe::cli
