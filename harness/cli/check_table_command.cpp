// `moe-harness check-table`: a tuned table set's rows checked, resolved, locked and covered (docs/tuning.md).
#include <fmt/format.h>

#include "fixtures/atomic_file.hpp"
#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/cli/commands.hpp"
#include "harness/run/kernel_registry.hpp"
#include "harness/run/output_guard.hpp"
#include "harness/isolation/stop_signal.hpp"
#include "harness/tuning/coverage.hpp"
#include "harness/tuning/row_runs.hpp"
#include "harness/tuning/set_checks.hpp"
#include "harness/tuning/table_lock.hpp"
#include "harness/tuning/tuner.hpp"
#include "kernels/runtime/device_info.hpp"

namespace moe::cli {
namespace {

std::filesystem::path resolve_suite_if(const std::string& s) {
  return s.empty() ? std::filesystem::path() : resolve_suite(s);
}

struct CheckTableArgs {
  std::vector<std::string> tables, more_tables, acknowledged;
  TableCheckOptions check;
  std::string lock, verify_lock, library_version, coverage, device, kernel = "host";
  RowRunOptions run;
};

// Prints each case's row and the device's rows no case reaches.
void print_coverage(const TableSet& s, const CheckTableArgs& a) {
  std::string gfx;
  int cu = 0;
  if (!a.device.empty()) {
    std::tie(gfx, cu) = parse_table_device(a.device, "--device");
  } else {
    const TableDevice d = table_device(make_kernel_by_id(a.kernel, a.check.host_budget)->needs_device(), detect_device());
    if (!d.known)
      throw_bad_input("command line", "--device", "no device to cover here: " + d.message,
                      "name it, e.g. --device gfx942:80");
    gfx = d.gfx, cu = d.cu_num;
  }
  const Suite suite = load_suite_file(resolve_suite(a.coverage));
  const Coverage c = table_coverage(s, suite.cases, gfx, cu);
  for (const CaseCoverage& cc : c.cases)
    if (cc.row)
      fmt::print("coverage {}:{}: {}: {} ({}, token {})\n", gfx, cu, cc.case_id, s.where(*cc.row), cc.rule,
                 s.row(*cc.row).token);
    else
      fmt::print("coverage {}:{}: {}: no row: default heuristic\n", gfx, cu, cc.case_id);
  for (const RowRef r : c.unreached)
    fmt::print("coverage {}:{}: {}: no case of suite {} reaches this row\n", gfx, cu, s.where(r), a.coverage);
  fmt::print("coverage {}:{}: {} case(s), {} without a row; {} row(s) of this device no case reaches\n", gfx, cu,
             c.cases.size(), std::count_if(c.cases.begin(), c.cases.end(), [](auto& x) { return !x.row; }),
             c.unreached.size());
}

}  // namespace

void add_check_table_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("check-table", "Check a tuned table set: each row's values (reproduced with a suite), "
                                                "duplicates, overrides between tables; lock it, verify a lock, show "
                                                "coverage (exit 1 with a line per defect)");
  auto a = std::make_shared<CheckTableArgs>();
  cmd->add_option("tables", a->tables, "the tables in set order, later over earlier (each may be a ':' list)");
  cmd->add_option("--table", a->more_tables, "one more table of the set (repeatable; after the positional ones)")
      ->allow_extra_args(false);
  cmd->add_option("--acknowledge-override", a->acknowledged,
                  "FILE:LINE of an overriding row whose override was reviewed (repeatable)")->allow_extra_args(false);
  cmd->add_option("--suite", a->check.suite, "the suite its cases come from: rerun each row's variant and judge it");
  cmd->add_flag("--require-device", a->check.require_device, "a row keyed on another device is a defect, not unchecked");
  cmd->add_option("--lock", a->lock, "write LOCK.json: each table's path, SHA-256, row count, the library version");
  cmd->add_option("--verify-lock", a->verify_lock, "fail (exit 1) naming each drift from LOCK.json; without tables: "
                                                   "the lock's");
  cmd->add_option("--library-version", a->library_version,
                  "the kernel library version the set is deployed with (needed for AITER tables; default: this "
                  "build's versions of the kernels the rows name)");
  cmd->add_option("--coverage", a->coverage, "suite: each case's row on the device, and the rows no case reaches");
  cmd->add_option("--device", a->device, "ARCH:CU the coverage is for (default: the live device of --kernel)");
  cmd->add_option("--kernel", a->kernel, "the kernel whose live device --coverage uses")->capture_default_str();
  cmd->add_option("--run", a->run.suite, "suite: run every reachable row's case through the set's lookup, judge "
                                         "and time it");
  cmd->add_option("--drift-factor", a->run.drift_factor, "with --run: a time more than this factor off the row's us "
                                                         "either way is drift (a defect)")
      ->capture_default_str()->transform(positive_real(1e30));
  cmd->add_option("--host-budget", a->check.host_budget, "FLOP budget above which the host kernel declines a case")
      ->transform(positive_real(1e30));
  cmd->callback([a, &exit_code] {
    if (!a->lock.empty() && !a->verify_lock.empty())
      throw_bad_input("command line", "--lock", "--lock and --verify-lock together: one run writes a lock or verifies one",
                      "verify with --verify-lock, then lock in a second run (or drop one of them)");
    std::optional<TableLock> locked;
    if (!a->verify_lock.empty()) locked = read_lock(a->verify_lock);
    std::vector<std::string> paths = split_table_paths(a->tables);
    for (const std::string& p : split_table_paths(a->more_tables, "--table")) paths.push_back(p);
    if (paths.empty() && locked)
      for (const LockedTable& t : locked->tables) paths.push_back(t.path);
    if (paths.empty())
      throw_bad_input("command line", "tables", "no table given", "name the tables of the set, in the order read");
    OutputGuard guard;  // --lock is written last: it may be no input
    for (const std::string& p : paths) guard.input(p, "tables");
    guard.input(a->verify_lock, "--verify-lock").input(resolve_suite_if(a->check.suite), "--suite");
    guard.input(resolve_suite_if(a->coverage), "--coverage").input(resolve_suite_if(a->run.suite), "--run");
    guard.output_file(a->lock, "--lock").check();
    // Bad input (exit 2) before any work: the tables, the suites, the device.
    const TableSet s = read_table_set(paths, a->acknowledged);
    for (const std::string* suite : {&a->check.suite, &a->coverage, &a->run.suite})
      if (!suite->empty()) load_suite_file(resolve_suite(*suite));
    if (!a->device.empty()) parse_table_device(a->device, "--device");
    const bool locking = locked || !a->lock.empty();
    const std::string version = locking ? library_version_of(s, a->library_version, a->check.host_budget) : "";
    int drift = 0;  // lock drift
    if (locked)
      for (const std::string& d : lock_drift(*locked, lock_of(s, version))) {
        fmt::print("{}: defect: lock drift: {}\n", a->verify_lock, d);
        ++drift;
      }
    if (!a->coverage.empty()) print_coverage(s, *a);
    const SetCheck c = check_table_set(s, a->check);
    for (const SetFinding& f : c.findings) fmt::print("{}: {}{}\n", f.where, f.defect ? "defect: " : "", f.message);
    int run_defects = 0, rows_run = 0;
    std::string interrupted;
    if (!a->run.suite.empty()) {
      a->run.require_device = a->check.require_device;
      a->run.host_budget = a->check.host_budget;
      // A stop signal: the row in flight (run in this process) ends, no row starts; what ran is printed, no lock is
      // written, exit 128 + N.
      const StopSignals stop("stopping after the row in flight");
      const RowRuns runs = run_table_rows(s, a->run);
      interrupted = runs.interrupted;
      for (const SetFinding& f : runs.findings) {
        fmt::print("{}: {}{}\n", f.where, f.defect ? "defect: " : "", f.message);
        run_defects += f.defect;
      }
      rows_run = runs.run;
      fmt::print("check-table --run: {} row(s) run through the lookup, {} passed, {} drifted beyond a factor {}\n",
                 runs.run, runs.passed, runs.drifted, a->run.drift_factor);
    }
    if (!interrupted.empty()) {
      fmt::print("check-table: interrupted by {}: not a verdict ({} row(s) run before it); {}\n", interrupted,
                 rows_run, a->lock.empty() ? "run it again for all" : a->lock + " not written");
      exit_code = exit_code_for_stop();
      return;
    }
    const int defects = c.defects() + drift + run_defects;
    fmt::print("check-table: {} row(s), {} checked, {} defect(s); {} table(s), {} tagged row(s), {} override(s), {} "
               "AITER row(s) checked statically{}\n",
               c.rows, c.checked, defects, s.tables.size(), s.tagged.size(), s.overrides.size(), c.aiter_rows,
               locked ? fmt::format(", lock {}", drift ? "drifted" : "verified") : "");
    // A verified lock, a coverage report or rows run count as checked; without any of them the per-row checks decide.
    const bool other_check = locked || !a->coverage.empty() || rows_run > 0;
    exit_code = defects > 0 ? 1 : other_check ? 0 : c.exit_code();
    if (!a->lock.empty()) {
      if (exit_code == 1) {
        fmt::print("check-table: a set with defects is not locked; {} not written\n", a->lock);
        return;
      }
      write_lock(lock_of(s, version), a->lock);
      fmt::print("check-table: locked {} table(s) with library version '{}' in {}\n", s.tables.size(), version, a->lock);
    }
  });
}

}  // namespace moe::cli
