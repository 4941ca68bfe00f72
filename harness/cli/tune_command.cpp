// `moe-harness tune`: tuned dispatch tables with measured provenance, written new or merged over an existing table
// (docs/tuning.md).
#include <fmt/format.h>

#include "fixtures/atomic_file.hpp"
#include "fixtures/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/isolation/stop_signal.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/run/output_guard.hpp"
#include "harness/tuning/table_merge.hpp"
#include "harness/tuning/tuner.hpp"

namespace moe::cli {

void add_tune_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("tune", "Time every dispatch variant of a kernel on each case, judged; write the "
                                         "fastest passing one per case to a table");
  auto o = std::make_shared<TuneOptions>();
  auto out = std::make_shared<std::string>();
  auto merge = std::make_shared<std::string>();
  cmd->add_option("--suite", o->suite, "suite name in cases/ or a .yaml path")->required();
  cmd->add_option("--filter", o->filters, "glob on case ids ('-' prefix excludes); repeatable")->allow_extra_args(false);
  cmd->add_option("--kernel", o->kernel, "the kernel to tune (host, gpu)")->capture_default_str();
  auto* out_opt = cmd->add_option("--out", *out, "the table to write (CSV)");
  auto* merge_opt = cmd->add_option("--merge-into", *merge,
                                    "an existing table: replace the rows of the tuned cases on this device, only when "
                                    "none goes missing; resumable from TABLE.partial");
  out_opt->excludes(merge_opt);
  merge_opt->excludes(out_opt);
  cmd->add_option("--host-budget", o->host_budget, "FLOP budget above which the host kernel declines a case")
      ->transform(positive_real(1e30));
  cmd->callback([=, &exit_code] {
    if (out->empty() && merge->empty())
      throw_bad_input("command line", "--out", "no table to write", "give --out TABLE.csv or --merge-into TABLE.csv");
    // A stop signal: the case in flight (tuned in this process) ends, no case starts; the rows of the cases tuned
    // whole go to TABLE.partial (never to the table: it would look complete), exit 128 + N.
    const StopSignals stop("stopping after the case in flight");
    // The table and its .partial are written; the suite is read (--merge-into's table is read and rewritten).
    const std::string& table = merge->empty() ? *out : *merge;
    const char* key = merge->empty() ? "--out" : "--merge-into";
    OutputGuard()
        .input(resolve_suite(o->suite), "--suite")
        .output_file(table, key)
        .output_file(partial_path(table), key)
        .check();
    if (!merge->empty()) {
      const MergeInto m = tune_merge_into(*o, *merge);
      for (const std::string& line : m.lines) fmt::print("tune: {}\n", line);
      exit_code = m.exit_code;
      return;
    }
    const TuneResult r = tune(*o);
    for (const std::string& n : r.notes) fmt::print("tune: {}\n", n);
    if (!r.interrupted.empty()) {
      const std::string partial = partial_path(*out);
      if (!r.table.rows.empty()) write_tuning_table(r.table, partial);
      fmt::print("tune: interrupted by {}: {} not written; {} row(s) of the cases tuned before it {}\n", r.interrupted,
                 *out, r.table.rows.size(), r.table.rows.empty() ? "(none)" : "are in " + partial);
      exit_code = exit_code_for_stop();
      return;
    }
    if (r.table.rows.empty() && r.failed_cases == 0) {
      fmt::print("tune: no case was tuned; nothing written\n");
      exit_code = 4;
      return;
    }
    write_tuning_table(r.table, *out);
    fmt::print("tune: {} row(s) written to {}; {} case(s) without a passing variant\n", r.table.rows.size(), *out,
               r.failed_cases);
    exit_code = r.failed_cases > 0 ? 1 : 0;
  });
}

}  // namespace moe::cli
