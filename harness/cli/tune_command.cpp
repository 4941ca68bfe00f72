// `moe-harness tune` and `moe-harness check-table`: tuned dispatch tables with measured provenance (docs/tuning.md).
#include <fmt/format.h>

#include "fixtures/atomic_file.hpp"
#include "harness/cli/commands.hpp"
#include "harness/tuning/table_checks.hpp"
#include "harness/tuning/tuner.hpp"

namespace moe::cli {

void add_tune_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("tune", "Time every dispatch variant of a kernel on each case, judged; write the "
                                         "fastest passing one per case to a table");
  auto o = std::make_shared<TuneOptions>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("--suite", o->suite, "suite name in cases/ or a .yaml path")->required();
  cmd->add_option("--filter", o->filters, "glob on case ids ('-' prefix excludes); repeatable")->allow_extra_args(false);
  cmd->add_option("--kernel", o->kernel, "the kernel to tune (host, gpu)")->capture_default_str();
  cmd->add_option("--out", *out, "the table to write (CSV)")->required();
  cmd->add_option("--host-budget", o->host_budget, "FLOP budget above which the host kernel declines a case")
      ->transform(positive_real(1e30));
  cmd->callback([=, &exit_code] {
    check_output_path(*out, "--out");
    const TuneResult r = tune(*o);
    for (const std::string& n : r.notes) fmt::print("tune: {}\n", n);
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

void add_check_table_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("check-table", "Refuse a tuned table's placeholder, duplicated, stale or "
                                                "unreproducible rows (exit 1 with a line per defect)");
  auto file = std::make_shared<std::string>();
  auto o = std::make_shared<TableCheckOptions>();
  cmd->add_option("table", *file, "the table (CSV)")->required();
  cmd->add_option("--suite", o->suite, "the suite its cases come from: rerun each row's variant and judge it");
  cmd->add_flag("--require-device", o->require_device, "a row keyed on another device is a defect, not unchecked");
  cmd->add_option("--host-budget", o->host_budget, "FLOP budget above which the host kernel declines a case")
      ->transform(positive_real(1e30));
  cmd->callback([=, &exit_code] {
    const TuningTable t = read_tuning_table(*file);
    const TableCheck c = check_table(t, *o);
    for (const TableFinding& f : c.findings)
      fmt::print("{}:{}: {}{}\n", *file, f.line, f.defect ? "defect: " : "", f.message);
    fmt::print("check-table: {} row(s), {} checked, {} defect(s)\n", c.rows, c.checked, c.defects());
    exit_code = c.defects() > 0 ? 1 : c.checked == 0 ? 4 : 0;
  });
}

}  // namespace moe::cli
