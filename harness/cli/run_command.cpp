#include <moe_harness/runner.hpp>

#include "harness/cli/commands.hpp"
#include "harness/cli/isolation_options.hpp"
#include <cstdio>
#include <filesystem>

#include "fixtures/error.hpp"
#include "harness/tuning/table_set.hpp"

namespace moe::cli {
namespace {

// The set's paths, ':'-joined, after the set resolved without a defect (table_set.hpp): else bad input (exit 2)
// before any work, each defect printed, the first thrown.
std::string validated_table_set(const std::vector<std::string>& tables, const std::vector<std::string>& acknowledged) {
  const std::vector<std::string> paths = split_table_paths(tables, "--dispatch-table");
  const TableSet s = read_table_set(paths, acknowledged);
  const SetFinding* first = nullptr;
  for (const SetFinding& f : s.findings)
    if (f.defect) {
      std::fprintf(stderr, "%s: defect: %s\n", f.where.c_str(), f.message.c_str());
      if (!first) first = &f;
    }
  if (first)
    throw_bad_input(first->where, "--dispatch-table", first->message,
                    "resolve the set's defects (`moe-harness check-table` lists them; docs/tuning.md \"Table sets\")");
  std::string joined;
  for (const std::string& p : paths) joined += (joined.empty() ? "" : ":") + p;
  return joined;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "Run a suite on the kernels under test and write a report directory");
  auto opt = std::make_shared<RunOptions>();
  auto require = std::make_shared<std::string>();
  auto seed = std::make_shared<std::uint64_t>();
  cmd->add_option("--suite", opt->suite, "suite name in cases/ or a .yaml path")->capture_default_str();
  cmd->add_option("--filter", opt->filters, "glob on case ids ('*', '?'; '-' prefix excludes); repeatable")->allow_extra_args(false);
  cmd->add_option("--kernel", opt->kernels, "kernel id (repeatable; default: every kernel in this build)")->allow_extra_args(false);
  cmd->add_option("--plugin", opt->plugins,
                  "kernel plugin library to judge, by path (kernels/plugin/moe_plugin.h); repeatable; without "
                  "--kernel only the plugins run")->allow_extra_args(false);
  auto no_timing = std::make_shared<bool>(false);
  cmd->add_flag("--verbose", opt->verbose, "GoogleTest's own log, a line per case and the summary table");
  cmd->add_flag("--no-timing", *no_timing, "verdicts only: kernels skip their warm-up and timed repeats");
  auto no_token_probes = std::make_shared<bool>(false);
  cmd->add_flag("--no-token-probes", *no_token_probes,
                "skip the token probes after a pass (padding rows, red zones, permuted tokens, relabeled experts) and the "
                "device probes (the harness's stream, graph replay)");
  auto dispatch = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--dispatch", *dispatch, "GPU kernels' A/B switch KEY=VALUE (repeatable): " + gpu::dispatch_option_spellings())
      ->allow_extra_args(false);
  auto* seed_opt = cmd->add_option("--seed", *seed, "override every case's seed")->transform(seed_u64());
  auto sequence_seed = std::make_shared<std::uint64_t>();
  auto* sequence_seed_opt =
      cmd->add_option("--sequence-seed", *sequence_seed,
                      "a call sequence's seed (replaces its `sequence.seed`: replays a shuffled step order)")
          ->transform(seed_u64());
  cmd->add_option("--report-dir", opt->report_dir, "report directory (default reports-out/<UTC time>)");
  cmd->add_option("--junit", opt->junit, "JUnit XML path (default <report-dir>/junit.xml)");
  cmd->add_option("--json", opt->json, "JSON report path (default <report-dir>/report.json)");
  auto* req = cmd->add_option("--require-device", *require,
                              "fail instead of skip when no GPU is present; optionally the arch it must be")
                  ->expected(0, 1);
  cmd->add_option("--reference-cache", opt->reference_cache,
                  "directory keeping references across runs, keyed by (case, reference version, case hash, fixture "
                  "fingerprint)");
  auto tables = std::make_shared<std::vector<std::string>>();
  auto acknowledged = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--dispatch-table", *tables,
                  "a tuned table set, in the order read (repeatable; each may be a ':' list): each case dispatches "
                  "from its row (the report's variant names FILE:LINE; a case the set does not cover says so)")
      ->allow_extra_args(false);
  cmd->add_option("--acknowledge-override", *acknowledged,
                  "FILE:LINE of a --dispatch-table row whose override of an earlier table's row was reviewed")
      ->allow_extra_args(false);
  cmd->add_option("--host-budget", opt->host_budget, "FLOP budget above which the host kernel declines a case")->transform(positive_real(1e30));
  const IsolationOptions isolation(cmd);
  auto resume = std::make_shared<std::string>();
  auto* resume_opt = cmd->add_option("--resume", *resume,
                                     "continue the run whose report directory this is: judge only the tests its "
                                     "journal lacks, with the run's own options");
  cmd->add_option("--gtest", opt->gtest_args,
                  "arguments for GoogleTest, up to the next option of run (e.g. --gtest --gtest_repeat=2); test "
                  "names: `moe-harness list --gtest`; one GoogleTest does not know is an error")
      ->allow_extra_args();
  cmd->callback([=, &exit_code] {
    // --resume DIR alone takes the run's options from its journal. Given with the run's own command line (its
    // options, --report-dir DIR included), every option is re-derived from that command line and compared with the
    // journal's start line, key by key (RunSession): a disagreement is refused naming the key.
    if (*resume_opt) {
      for (const char* o : {"--suite", "--filter", "--kernel", "--plugin", "--no-timing", "--no-token-probes",
                            "--dispatch", "--seed", "--sequence-seed", "--junit", "--json", "--require-device",
                            "--reference-cache", "--host-budget", "--dispatch-table", "--gtest"})
        opt->resume_checks_options |= cmd->count(o) > 0;
      if (cmd->count("--acknowledge-override") && !cmd->count("--dispatch-table"))
        throw_bad_input("command line", "--acknowledge-override", "given with --resume but without --dispatch-table",
                        "give the run's --dispatch-table with it, or drop it (--resume alone takes the run's table)");
      if (cmd->count("--report-dir")) {
        std::error_code ec;  // a directory that does not exist is not the one --resume continues
        if (!std::filesystem::equivalent(opt->report_dir, *resume, ec) || ec)
          throw_bad_input("command line", "--report-dir",
                          "'" + opt->report_dir.string() + "' is not the directory --resume continues ('" + *resume + "')",
                          "give --report-dir the directory of --resume, or drop it");
      }
    }
    opt->resume = *resume;
    isolation.apply(*opt);
    if (*seed_opt) opt->seed = *seed;
    if (*sequence_seed_opt) opt->sequence_seed = *sequence_seed;
    if (*no_timing) opt->timing = false;
    if (*no_token_probes) opt->token_probes = false;
    opt->dispatch = gpu::parse_dispatch_options(*dispatch);
    if (!tables->empty()) opt->dispatch_table = validated_table_set(*tables, *acknowledged);
    if (*req) {
      opt->device.required = true;
      opt->device.arch = *require;
    }
    exit_code = api::run_suite(*opt);
  });
}

}  // namespace moe::cli
