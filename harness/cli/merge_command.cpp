#include <cstdio>

#include "fixtures/atomic_file.hpp"
#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/cli/commands.hpp"
#include "harness/run/kernel_registry.hpp"
#include "harness/run/output_guard.hpp"
#include "harness/run/runner.hpp"
#include "reports/merge.hpp"

namespace moe::cli {

void add_merge_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("merge", "Merge shard reports into one; fail on a duplicated or missing case");
  auto shards = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto suite = std::make_shared<std::string>();
  auto filters = std::make_shared<std::vector<std::string>>();
  auto kernels = std::make_shared<std::vector<std::string>>();
  cmd->add_option("REPORT", *shards, "shard report.json files")->required();
  cmd->add_option("--out", *out, "merged report.json to write")->required();
  cmd->add_option("--expect-suite", *suite, "suite whose (filtered) cases every kernel must cover");
  cmd->add_option("--filter", *filters, "glob on case ids for --expect-suite (repeatable)")->allow_extra_args(false);
  cmd->add_option("--kernel", *kernels,
                  "kernels expected, an id or host, gpu (with --expect-suite; default: every kernel the shards name)")
      ->allow_extra_args(false);
  cmd->callback([=, &exit_code] {
    OutputGuard guard;
    for (const std::string& s : *shards) guard.input(s, "REPORT");
    if (!suite->empty()) guard.input(resolve_suite(*suite), "--expect-suite");
    guard.output_file(*out, "--out").check();
    if (suite->empty() && !(filters->empty() && kernels->empty()))
      throw_bad_input("command line", filters->empty() ? "--kernel" : "--filter", "only applies with --expect-suite",
                      "add --expect-suite SUITE (the suite the shards ran)");
    std::vector<std::filesystem::path> paths(shards->begin(), shards->end());
    const MergeResult m = merge_reports(paths);
    // The expected set: the suite's (filtered) cases for each named kernel, by default every kernel the shards name.
    std::vector<std::pair<std::string, std::string>> expected;
    if (!suite->empty()) {
      const Suite s = load_suite_file(resolve_suite(*suite));
      for (const auto& k : kernels->empty() ? m.kernel_ids : resolve_kernel_names(*kernels, m.kernel_ids, "--kernel"))
        for (const auto& c : s.cases)
          if (case_selected(*filters, c.id)) expected.push_back({k, c.id});
    }
    const auto missing = missing_cases(m, expected);
    for (const auto& [k, id] : m.duplicates) std::printf("DUPLICATE %s %s (in two shards)\n", k.c_str(), id.c_str());
    for (const auto& [k, id] : missing) std::printf("MISSING %s %s (in no shard)\n", k.c_str(), id.c_str());
    const bool ok = m.duplicates.empty() && missing.empty();
    if (ok) write_file_atomically(*out, m.json);
    std::printf("merge: %s (%d cases from %zu shards%s)\n", ok ? "OK" : "FAILED", m.total, paths.size(),
                ok ? (", written to " + *out).c_str() : "; nothing written");
    exit_code = ok ? 0 : 1;
  });
}

}  // namespace moe::cli
