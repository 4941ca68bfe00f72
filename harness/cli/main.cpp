// moe-harness: the command-line entry point. Exit codes (docs/cli.md "Exit codes"): 0 all passed, 1 a case failed,
// 2 bad input or usage, 3 harness or device error.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include <moe_harness/report.hpp>
#include <moe_harness/runner.hpp>

#include "harness/cli/commands.hpp"

int main(int argc, char** argv) {
  // The supervisor's worker process (harness/isolation/worker.hpp): not a user command.
  if (const auto worker = moe::api::worker_main(argc, argv)) return *worker;
  CLI::App app{"moe-harness: numerical regression harness for fused MoE GPU kernels"};
  app.set_version_flag("--version", [] { return "moe-harness " + moe::api::version() + " (" + moe::api::build_stamp() + ")"; },
                       "Print the version and the source tree this binary was built from, then exit");
  app.require_subcommand(1);
  int exit_code = 0;
  for (auto add : moe::cli::kCommands) add(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help or the usage error
    return rc == 0 ? 0 : int(moe::ExitCode::bad_input);
  } catch (const moe::api::Error& e) {
    std::fprintf(stderr, "moe-harness: %s\n", e.what());
    return int(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "moe-harness: internal error: %s\n", e.what());
    return int(moe::ExitCode::harness_error);
  }
  return exit_code;
}
