// moe-harness: the command-line entry point. Exit codes (README "Exit codes"): 0 all passed, 1 a case failed,
// 2 bad input or usage, 3 harness or device error.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "fixtures/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/isolation/worker.hpp"
#include "harness/runner.hpp"

int main(int argc, char** argv) {
  // The supervisor's worker process (harness/isolation/worker.hpp): not a user command.
  if (argc == 2 && std::string(argv[1]) == moe::kWorkerArg) return moe::run_worker(moe::kWorkerRequestFd, moe::kWorkerRecordFd);
  CLI::App app{"moe-harness: numerical regression harness for fused MoE GPU kernels"};
  app.set_version_flag("--version", [] { return std::string("moe-harness ") + moe::kHarnessVersion + " (" + moe::harness_build_stamp() + ")"; },
                       "Print the version and the source tree this binary was built from, then exit");
  app.require_subcommand(1);
  int exit_code = 0;
  moe::cli::add_formats_command(app, exit_code);
  moe::cli::add_list_command(app, exit_code);
  moe::cli::add_describe_command(app, exit_code);
  moe::cli::add_run_command(app, exit_code);
  moe::cli::add_export_command(app, exit_code);
  moe::cli::add_selftest_command(app, exit_code);
  moe::cli::add_compare_command(app, exit_code);
  moe::cli::add_gate_command(app, exit_code);
  moe::cli::add_calibrate_command(app, exit_code);
  moe::cli::add_merge_command(app, exit_code);
  moe::cli::add_judge_command(app, exit_code);
  moe::cli::add_html_command(app, exit_code);
  moe::cli::add_report_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help or the usage error
    return rc == 0 ? 0 : int(moe::ExitCode::bad_input);
  } catch (const moe::Error& e) {
    std::fprintf(stderr, "moe-harness: %s\n", e.what());
    return int(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "moe-harness: internal error: %s\n", e.what());
    return int(moe::ExitCode::harness_error);
  }
  return exit_code;
}
