// `moe-harness judge CASE --output OUT.safetensors`: the verdict on an output produced outside the harness (any
// program that read `moe-harness export CASE`'s fixture), through the same pipeline, thresholds and reports as `run`.
#include <memory>

#include <moe_harness/case.hpp>
#include <moe_harness/runner.hpp>
#include <moe_harness/suite.hpp>

#include "harness/cli/commands.hpp"
#include "kernels/external/external_output_kernel.hpp"

namespace moe::cli {

void add_judge_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("judge", "Judge an output produced by an external program from an exported case");
  auto opt = std::make_shared<RunOptions>();
  auto id = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto tensor = std::make_shared<std::string>("out");
  auto name = std::make_shared<std::string>("external");
  auto allow_missing = std::make_shared<bool>(false);
  auto contract = std::make_shared<std::string>("default");
  cmd->add_option("CASE", *id, "canonical case id (as exported)")->required();
  cmd->add_option("--output", *output, "safetensors file holding the output [tokens, hidden] in the case's output dtype")
      ->required();
  cmd->add_option("--tensor", *tensor, "name of the output tensor in that file")->capture_default_str();
  cmd->add_option("--kernel-id", *name, "the kernel's name in the reports")->capture_default_str();
  cmd->add_flag(kAllowMissingFingerprintFlag, *allow_missing,
               "judge an output whose metadata lacks moe.fixture_fingerprint (the report says it was not checked)");
  cmd->add_option("--contract", *contract,
                  "the rounding points the program fixes, e.g. gate_up=bf16,slot=bf16 (docs/numerics.md); default: "
                  "none, it followed the case's contract")
      ->capture_default_str();
  cmd->add_option("--suite", opt->suite, "suite name in cases/ or a .yaml path")->capture_default_str();
  cmd->add_option("--report-dir", opt->report_dir, "report directory (default reports-out/<UTC time>)");
  cmd->add_option("--junit", opt->junit, "JUnit XML path (default <report-dir>/junit.xml)");
  cmd->add_option("--json", opt->json, "JSON report path (default <report-dir>/report.json)");
  cmd->callback([=, &exit_code] {
    // Every input problem is found before anything runs or is written (exit 2).
    const api::Suite s = api::load_suite(opt->suite);
    const api::CaseSpec& c = api::find_case(s, *id);
    const RoundingContract declared = parse_rounding_contract_or_throw(*contract, "command line", "--contract");
    auto k = std::make_shared<ExternalOutputKernel>(*name, *output, *tensor, c.problem);
    k->declare_contract(declared);
    std::uint64_t case_fingerprint = 0;  // only needed when the output records one
    if (k->recorded_fingerprint()) case_fingerprint = api::make_fixture(c).fingerprint;
    k->check_fixture(case_fingerprint, c.id, *allow_missing);
    opt->extra_kernels.push_back(k);
    opt->filters = {c.id};
    exit_code = api::run_suite(*opt);
  });
}

}  // namespace moe::cli
