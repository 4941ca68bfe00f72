#include <algorithm>
#include <cstdio>
#include <future>
#include <fmt/format.h>
#include <set>

#include "fixtures/atomic_file.hpp"
#include "fixtures/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/run/kernel_registry.hpp"
#include "harness/run/output_guard.hpp"
#include "reports/drift.hpp"
#include "harness/run/release_gate.hpp"

namespace moe::cli {
namespace {

// The full ids of `--kernel` names; each must name a kernel of one of the two reports.
std::vector<std::string> compared_kernels(const std::vector<std::string>& names, const ReadReport& b, const ReadReport& n) {
  std::set<std::string> present;
  for (const auto* r : {&b, &n})
    for (const auto& c : r->cases) present.insert(c.kernel);
  std::vector<std::string> ids;
  for (const auto& name : names) {
    ids.push_back(canonical_kernel_id(name));
    if (!present.count(ids.back()))
      throw_bad_input("command line", "--kernel",
                      fmt::format("kernel '{}' has no case in {} or {}", ids.back(), b.file, n.file),
                      fmt::format("pass one of the kernels they hold: {}", fmt::join(present, ", ")));
  }
  return ids;
}

}  // namespace

void add_compare_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("compare", "Drift between two run reports (exit 1 when anything drifted)");
  auto base = std::make_shared<std::string>(), next = std::make_shared<std::string>();
  auto m = std::make_shared<DriftMargins>();
  auto json = std::make_shared<std::string>(), md = std::make_shared<std::string>();
  cmd->add_option("BASE", *base, "base report.json")->required();
  cmd->add_option("NEW", *next, "new report.json")->required();
  cmd->add_option("--cos-drop", m->cos_drop, "allowed drop of min cos and of any token's cos")->capture_default_str()->transform(real_in(0, 2));
  cmd->add_option("--rel-factor", m->rel_factor, "allowed growth factor of max rel")->capture_default_str()->transform(real_in(1, 1e6));
  cmd->add_option("--rel-floor", m->rel_floor, "max rel below this never counts as drift")->capture_default_str()->transform(real_in(0, 1e30));
  cmd->add_option("--json", *json, "write the findings as JSON");
  cmd->add_option("--markdown", *md, "write the findings as Markdown");
  auto kernels = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--kernel", *kernels, "compare only this kernel's cases (host, gpu or a full id; repeatable)")
      ->allow_extra_args(false);
  cmd->callback([=, &exit_code] {
    OutputGuard().input(*base, "BASE").input(*next, "NEW").output_file(*json, "--json").output_file(*md, "--markdown")
        .check();
    // The two reports are read at once (each read is one thread's parse): about half the wall time on two cores.
    auto reading = std::async(std::launch::async, [&] { return read_report(*next); });
    const ReadReport b = read_report(*base), n = reading.get();
    const std::vector<std::string> ids = compared_kernels(*kernels, b, n);
    const bool compared = std::any_of(b.cases.begin(), b.cases.end(), [&](const ReportCase& c) {
      return ids.empty() || std::find(ids.begin(), ids.end(), c.kernel) != ids.end();
    });
    const auto f = compare_reports(b, n, *m, ids);
    const std::string text = drift_markdown(b, n, f);
    std::printf("%s", text.c_str());
    if (!json->empty()) write_file_atomically(*json, drift_json(f));
    if (!md->empty()) write_file_atomically(*md, text);
    if (!compared) {
      std::fprintf(stderr, "moe-harness compare: nothing compared: %s holds no case%s to compare against\n",
                   b.file.c_str(), ids.empty() ? "" : fmt::format(" of {}", fmt::join(ids, ", ")).c_str());
      exit_code = int(ExitCode::nothing_checked);
      return;
    }
    exit_code = drift_failures(f) > 0 ? int(ExitCode::case_failed) : int(ExitCode::ok);
  });
}

void add_gate_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("gate", "Release gate: every required (case, kernel) on this device present and passed");
  auto policy = std::make_shared<std::string>(), report = std::make_shared<std::string>();
  auto kernels = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--policy", *policy, "the policy suite (cases/release.yaml)")->required();
  cmd->add_option("REPORT", *report, "report.json of the release run")->required();
  cmd->add_option("--kernel", *kernels, "kernels that must pass: an id or host, gpu (default: every kernel in the report)")->allow_extra_args(false);
  cmd->callback([=, &exit_code] {
    const Suite s = load_suite_file(resolve_suite(*policy));
    const ReadReport r = read_report(*report);
    const auto v = check_release_gate(s, r, *kernels);
    for (const auto& x : v) std::printf("GATE FAIL %s %s: %s\n  to do: %s\n", x.kernel.c_str(), x.id.c_str(), x.problem.c_str(), x.todo.c_str());
    std::printf("gate: %s (%zu violation(s); policy %s, report %s, device %s)\n", v.empty() ? "PASS" : "FAIL", v.size(),
                s.file.c_str(), r.file.c_str(), r.device_arch.empty() ? "none" : r.device_arch.c_str());
    exit_code = v.empty() ? 0 : 1;
  });
}

}  // namespace moe::cli
