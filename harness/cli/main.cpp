// moe-harness: the command-line entry point. Exit codes (docs/cli.md "Exit codes"): 0 all passed, 1 a case failed,
// 2 bad input or usage, 3 harness or device error.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <moe_harness/report.hpp>
#include <moe_harness/runner.hpp>

#include "harness/cli/commands.hpp"

namespace {

// Edits (insert, delete, replace one character) that turn a into b.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// A first word that names no subcommand: CLI11 would say only "A subcommand is required". Says which word, and the
// closest subcommand when one is within a third of its length (at least 2 edits).
bool unknown_subcommand(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  const std::string word = argv[1];
  std::string closest;
  std::size_t best = std::string::npos;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == word) return false;
    const std::size_t d = edit_distance(word, sub->get_name());
    if (d < best) best = d, closest = sub->get_name();
  }
  const bool near = best <= std::max<std::size_t>(2, closest.size() / 3);
  std::fprintf(stderr, "moe-harness: unknown subcommand '%s'%s (`moe-harness --help` lists them)\n", word.c_str(),
               near ? (": did you mean '" + closest + "'?").c_str() : "");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // The supervisor's worker process (harness/isolation/worker.hpp): not a user command.
  if (const auto worker = moe::api::worker_main(argc, argv)) return *worker;
  CLI::App app{"moe-harness: numerical regression harness for fused MoE GPU kernels"};
  app.set_version_flag("--version", [] { return "moe-harness " + moe::api::version() + " (" + moe::api::build_stamp() + ")"; },
                       "Print the version and the source tree this binary was built from, then exit");
  app.require_subcommand(1);
  app.name("moe-harness");  // usage lines name the command, not the path of the binary (a wheel's _native/bin/...)
  int exit_code = 0;
  for (auto add : moe::cli::kCommands) add(app, exit_code);
  if (unknown_subcommand(app, argc, argv)) return int(moe::ExitCode::bad_input);
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
