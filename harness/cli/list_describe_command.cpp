#include <cstdio>
#include <fmt/format.h>

#include <moe_harness/case.hpp>
#include <moe_harness/suite.hpp>

#include "harness/cli/commands.hpp"
#include "reports/junit_report.hpp"  // gtest_test_name

namespace moe::cli {

void add_list_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("list", "List the case ids of a suite (or, with --gtest, the GoogleTest test names)");
  auto suite = std::make_shared<std::string>("smoke");
  auto filters = std::make_shared<std::vector<std::string>>();
  auto kernels = std::make_shared<std::vector<std::string>>();
  auto gtest = std::make_shared<bool>(false);
  cmd->add_option("--suite", *suite, "suite name in cases/ or a .yaml path")->capture_default_str();
  cmd->add_option("--filter", *filters, "glob on case ids ('*', '?'; '-' prefix excludes); repeatable")->allow_extra_args(false);
  cmd->add_flag("--gtest", *gtest,
                "print the GoogleTest names KERNEL.CASE that `run --gtest --gtest_filter=` matches ('-' and ':' "
                "spelled '_'), for each kernel");
  cmd->add_option("--kernel", *kernels, "with --gtest: kernel id (repeatable; default: every kernel in this build)")
      ->allow_extra_args(false);
  cmd->callback([=, &exit_code] {
    const api::Suite s = api::load_suite(*suite);
    if (!kernels->empty() && !*gtest)
      throw_bad_input("command line", "--kernel", "--kernel only chooses the kernels of `list --gtest`",
                      "add --gtest, or drop --kernel");
    std::vector<std::string> prefixes = {""};
    if (*gtest) {
      prefixes.clear();
      for (auto& k : api::make_kernels(*kernels)) prefixes.push_back(gtest_test_name(k->id()) + ".");
    }
    int n = 0;
    for (const std::string& prefix : prefixes)
      for (const auto& c : s.cases)
        if (api::case_selected(*filters, c.id)) {
          std::printf("%s%s\n", prefix.c_str(), (*gtest ? gtest_test_name(c.id) : c.id).c_str());
          n += prefix == prefixes.front();
        }
    std::fprintf(stderr, "%d of %zu cases in suite %s (%s)\n", n, s.cases.size(), s.name.c_str(), s.file.c_str());
    // A filter that selects nothing is "nothing checked" (exit 4), as `run` with the same filter would end: a script
    // that lists before it runs learns it at once.
    if (n == 0) {
      std::fprintf(stderr, "moe-harness: nothing checked (exit 4): the filters selected no case of suite %s\n",
                   s.name.c_str());
      exit_code = int(ExitCode::nothing_checked);
      return;
    }
    exit_code = 0;
  });
}

void add_describe_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("describe", "Show one expanded case and whether each kernel would run it here");
  auto suite = std::make_shared<std::string>("smoke");
  auto id = std::make_shared<std::string>();
  cmd->add_option("CASE", *id, "canonical case id")->required();
  cmd->add_option("--suite", *suite, "suite name in cases/ or a .yaml path")->capture_default_str();
  cmd->callback([=, &exit_code] {
    const api::Suite s = api::load_suite(*suite);
    const api::CaseSpec* c = &api::find_case(s, *id);
    std::printf("%s", api::case_json(*c).c_str());
    const api::DeviceDetection d = api::detect_device();
    std::printf("device: %s\n", d.device ? fmt::format("{} {} ({} CU)", d.device->name, d.device->arch, d.device->compute_units).c_str()
                                         : ("none: " + d.message).c_str());
    for (auto& k : api::make_kernels()) {
      const api::GateDecision g = api::gate(*c, *k, d);
      const char* what = g.action == GateDecision::Action::run ? "would RUN" : g.action == GateDecision::Action::skip ? "would SKIP" : "would FAIL";
      std::printf("%s: %s%s%s\n", k->id().c_str(), what, g.reason.empty() ? "" : ": ", g.reason.c_str());
    }
    exit_code = 0;
  });
}

}  // namespace moe::cli
