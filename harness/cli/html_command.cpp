// `moe-harness html REPORT.json --out FILE [--baseline BASE.json] [--detail-limit N]`: the self-contained HTML report
// of a run, streamed into the file, with drift against a baseline when given (the margins of `compare`).
#include <cstdio>

#include "fixtures/atomic_file.hpp"
#include "harness/cli/commands.hpp"
#include "harness/run/output_guard.hpp"
#include "reports/drift.hpp"
#include "reports/html_report.hpp"

namespace moe::cli {

void add_html_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("html", "Write a run report as one self-contained HTML file (plots, worst tokens, drift)");
  auto report = std::make_shared<std::string>(), out = std::make_shared<std::string>(),
       base = std::make_shared<std::string>();
  auto m = std::make_shared<DriftMargins>();
  cmd->add_option("REPORT", *report, "report.json of the run")->required();
  cmd->add_option("--out", *out, "HTML file to write")->required();
  cmd->add_option("--baseline", *base, "baseline report.json: adds a drift section");
  cmd->add_option("--cos-drop", m->cos_drop, "drift margin: allowed drop of min cos and any token's cos")->capture_default_str()->transform(real_in(0, 2));
  cmd->add_option("--rel-factor", m->rel_factor, "drift margin: allowed growth factor of max rel")->capture_default_str()->transform(real_in(1, 1e6));
  auto limit = std::make_shared<std::size_t>(HtmlOptions{}.detail_limit);
  cmd->add_option("--detail-limit", *limit, "failing cases with per-token plots (the rest are table rows)")
      ->check(CLI::Range(std::size_t(1), std::size_t(1000000)))
      ->capture_default_str();
  cmd->callback([=, &exit_code] {
    OutputGuard().input(*report, "REPORT").input(*base, "--baseline").output_file(*out, "--out").check();
    const ReadReport r = read_report(*report);
    HtmlOptions opt;
    opt.detail_limit = *limit;
    ReadReport b;
    std::vector<DriftFinding> f;
    if (!base->empty()) {
      b = read_report(*base);
      f = compare_reports(b, r, *m);
      opt.baseline = &b;
      opt.drift = &f;
    }
    write_file_atomically(*out, [&](std::ostream& o) { write_html(o, r, opt); });
    std::printf("wrote %s (%zu cases%s)\n", out->c_str(), r.cases.size(),
                base->empty() ? "" : (", " + std::to_string(f.size()) + " drift finding(s)").c_str());
    exit_code = 0;
  });
}

}  // namespace moe::cli
