#include "fixtures/atomic_file.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/isolation_options.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/run/output_guard.hpp"
#include "harness/tools/selftest.hpp"

namespace moe::cli {

void add_selftest_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("selftest", "Prove every mutant is caught and the clean kernel never fails");
  auto opt = std::make_shared<SelftestOptions>();
  cmd->add_option("--kernel", opt->kernel, "host (the host contract kernel) or gpu (the GPU kernels' mutant build)")
      ->check(CLI::IsMember({"host", "gpu"}))
      ->capture_default_str();
  cmd->add_option("--suite", opt->suites, "suite(s) of selftest cases (default: selftest; with --kernel gpu also selftest-gpu)");
  cmd->add_option("--seeds", opt->seeds, "seeds for the clean kernel")->capture_default_str()->transform(count_in(1, 100000));
  cmd->add_option("--json", opt->json, "write the table as JSON");
  const IsolationOptions isolation(cmd);
  cmd->callback([=, &exit_code] {
    OutputGuard guard;
    for (const std::string& s : opt->suites) guard.input(resolve_suite(s), "--suite");
    guard.output_file(opt->json, "--json").check();
    isolation.apply(*opt);
    exit_code = run_selftest(*opt);
  });
}

}  // namespace moe::cli
