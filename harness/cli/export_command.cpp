// `moe-harness export CASE --out DIR` and `moe-harness export --suite S [--filter GLOB]... --out DIR`: the contract
// for external runners (docs/export.md), one case or one directory per case with an index (harness/batch/).
#include <cstdio>
#include <filesystem>

#include <moe_harness/suite.hpp>

#include "fixtures/atomic_file.hpp"
#include "fixtures/error.hpp"
#include "harness/batch/case_export.hpp"
#include "harness/cli/commands.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/run/output_guard.hpp"

namespace moe::cli {

void add_export_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "export", "Write a case's fixture, references and canonical case for an external runner (no CASE: every case of "
                "the suite the filters select, one directory each, and DIR/index.json)");
  auto suite = std::make_shared<std::string>("smoke");
  auto id = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto filters = std::make_shared<std::vector<std::string>>();
  cmd->add_option("CASE", *id, "canonical case id (none: the suite's cases, see --filter)");
  cmd->add_option("--suite", *suite, "suite name in cases/ or a .yaml path")->capture_default_str();
  cmd->add_option("--filter", *filters, "without CASE: glob on case ids ('*', '?'; a leading '-' excludes), repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--out", *out, "output directory")->required();
  cmd->callback([=, &exit_code] {
    if (id->empty()) {
      exit_code = export_suite({*suite, *filters, *out});
      return;
    }
    if (!filters->empty())
      throw_bad_input("command line", "--filter", "a CASE and --filter were both given",
                      "export one case (CASE) or the cases a filter selects (--filter, no CASE)");
    OutputGuard()
        .input(resolve_suite(*suite), "--suite")
        .output_dir(*out, "--out", {"fixture.safetensors", "reference.safetensors", "case.json"})
        .check();
    const api::Suite s = api::load_suite(*suite);
    const api::CaseSpec& c = api::find_case(s, *id);
    export_case(c, *out);  // everything is computed before anything is written
    std::printf("exported %s to %s (fixture.safetensors, reference.safetensors, case.json)\n", c.id.c_str(), out->c_str());
    exit_code = 0;
  });
}

}  // namespace moe::cli
