#include "fixtures/atomic_file.hpp"
#include "harness/tools/calibrate.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/isolation_options.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/run/output_guard.hpp"

namespace moe::cli {

void add_calibrate_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("calibrate", "Worst metrics of a correct kernel over many seeds, beside the thresholds");
  auto opt = std::make_shared<CalibrateOptions>();
  cmd->add_option("--suite", opt->suite, "suite")->capture_default_str();
  cmd->add_option("--filter", opt->filters, "glob on case ids (repeatable)")->allow_extra_args(false);
  cmd->add_option("--kernel", opt->kernels, "kernel(s) believed correct (default: host)")->allow_extra_args(false);
  cmd->add_option("--seeds", opt->seeds, "seeds per case")->capture_default_str()->transform(count_in(1, 100000));
  cmd->add_option("--json", opt->json, "write the table as JSON");
  auto dispatch = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--dispatch", *dispatch, "GPU kernels' A/B switch KEY=VALUE (repeatable): " + gpu::dispatch_option_spellings())
      ->allow_extra_args(false);
  const IsolationOptions isolation(cmd);
  cmd->callback([=, &exit_code] {
    OutputGuard().input(resolve_suite(opt->suite), "--suite").output_file(opt->json, "--json").check();
    opt->dispatch = gpu::parse_dispatch_options(*dispatch);
    isolation.apply(*opt);
    exit_code = run_calibration(*opt);
  });
}

}  // namespace moe::cli
