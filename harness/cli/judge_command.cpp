// `moe-harness judge CASE --output OUT.safetensors`: the verdict on an output produced outside the harness (any
// program that read `moe-harness export CASE`'s fixture), through the same pipeline, thresholds and reports as `run`;
// `moe-harness judge --dir DIR`: every case of an `export --suite` directory in one process (harness/batch/).
#include <memory>

#include <moe_harness/case.hpp>
#include <moe_harness/runner.hpp>
#include <moe_harness/suite.hpp>

#include "fixtures/error.hpp"
#include "harness/batch/batch_judge.hpp"
#include "harness/cli/commands.hpp"
#include "harness/pipeline/rounding_resolution.hpp"
#include "harness/run/report_dir.hpp"
#include "kernels/external/external_output_kernel.hpp"

namespace moe::cli {

void add_judge_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("judge", "Judge an output produced by an external program from an exported case "
                                          "(--dir: every case of an `export --suite` directory)");
  auto opt = std::make_shared<RunOptions>();
  auto batch = std::make_shared<BatchJudgeOptions>();
  auto id = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto tensor = std::make_shared<std::string>("out");
  auto name = std::make_shared<std::string>("external");
  auto allow_missing = std::make_shared<bool>(false);
  auto contract = std::make_shared<std::string>("default");
  auto suite_given = std::make_shared<std::string>();
  cmd->add_option("CASE", *id, "canonical case id (as exported); none with --dir");
  cmd->add_option("--output", *output,
                  "safetensors file holding the output [tokens, hidden] in the case's output dtype (with --dir: its "
                  "name in each case directory, default out.safetensors)");
  cmd->add_option("--dir", batch->dir, "a directory `export --suite S --out DIR` wrote: judge every case in it");
  cmd->add_flag("--recompute", batch->recompute, "with --dir: recompute every reference, never use an exported one");
  cmd->add_option("--tensor", *tensor, "name of the output tensor in that file")->capture_default_str();
  cmd->add_option("--kernel-id", *name, "the kernel's name in the reports")->capture_default_str();
  cmd->add_flag(kAllowMissingFingerprintFlag, *allow_missing,
               "judge an output whose metadata lacks moe.fixture_fingerprint (the report says it was not checked)");
  cmd->add_option("--contract", *contract,
                  "the rounding points the program fixes, e.g. gate_up=bf16,slot=bf16 (docs/numerics.md); default: "
                  "none, it followed the case's contract")
      ->capture_default_str();
  cmd->add_option("--suite", *suite_given, "suite name in cases/ or a .yaml path (default smoke; with --dir: the suite "
                                           "the export index names)");
  cmd->add_option("--report-dir", opt->report_dir, "report directory (default reports-out/<UTC time>)");
  cmd->add_option("--junit", opt->junit, "JUnit XML path (default <report-dir>/junit.xml)");
  cmd->add_option("--json", opt->json, "JSON report path (default <report-dir>/report.json)");
  cmd->callback([=, &exit_code] {
    if (!batch->dir.empty()) {
      if (!id->empty())
        throw_bad_input("command line", "--dir", "a CASE and --dir were both given",
                        "judge one case (CASE --output FILE) or every case of an export directory (--dir DIR)");
      batch->suite = *suite_given;
      if (!output->empty()) batch->output = *output;
      batch->tensor = *tensor;
      batch->kernel_id = *name;
      batch->contract = *contract;
      batch->allow_missing_fingerprint = *allow_missing;
      batch->report_dir = opt->report_dir;
      batch->junit = opt->junit;
      batch->json = opt->json;
      exit_code = judge_directory(*batch);
      return;
    }
    if (id->empty() || output->empty())
      throw_bad_input("command line", id->empty() ? "CASE" : "--output",
                      "judge needs a CASE and --output OUT.safetensors, or --dir DIR",
                      "moe-harness judge CASE --output OUT.safetensors, or moe-harness judge --dir DIR");
    if (batch->recompute)
      throw_bad_input("command line", "--recompute", "only --dir uses exported references",
                      "drop --recompute: judge CASE always computes the references");
    if (!suite_given->empty()) opt->suite = *suite_given;
    run_output_guard(*opt).input(*output, "--output").check();  // the output judged is no report file
    // Every input problem is found before anything runs or is written (exit 2).
    const api::Suite s = api::load_suite(opt->suite);
    const api::CaseSpec& c = api::find_case(s, *id);
    const RoundingContract declared = parse_rounding_contract_or_throw(*contract, "command line", "--contract");
    // A declared floor that zeroes every input of the case is bad input before any work (exit 2).
    refuse_zeroing_floor(resolve_contract(c, c.problem, declared), c.source, "command line", "--contract");
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
