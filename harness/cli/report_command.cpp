// `moe-harness report DIR`: rebuilds report.json, junit.xml, summary.md and report.html from the journal of a run
// (harness/isolation/journal.hpp), e.g. one killed by SIGKILL or a CI time-out; stale temporary files go. Exits as
// `run` would on those records, and 3 for a run that did not finish.
#include <cstdio>

#include "fixtures/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/isolation/journal.hpp"
#include "harness/isolation/journal_checks.hpp"
#include "harness/isolation/run_session.hpp"
#include "harness/run/report_dir.hpp"
#include "reports/report_files.hpp"

namespace moe::cli {

void add_report_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("report", "Rebuild a run's report files from its journal (a killed or interrupted run)");
  auto dir = std::make_shared<std::string>();
  cmd->add_option("DIR", *dir, "the run's report directory (holds journal.jsonl)")->required();
  cmd->callback([=, &exit_code] {
    const Journal j = read_journal(*dir);
    check_journal_records(j);  // a record of another run is refused by name, never counted
    const ReportDirLock lock(*dir, "DIR");  // no run may be writing into it meanwhile
    for (const std::string& f : remove_stale_temp_files(*dir))
      std::fprintf(stderr, "moe-harness: removed %s/%s, a temporary file of a run that was killed\n", dir->c_str(), f.c_str());
    if (j.torn_tail) std::fprintf(stderr, "moe-harness: %s: its last line was cut short and is ignored\n", j.file.c_str());
    const RunReport r = report_from_journal(j);
    RunOptions o;
    try {
      o = run_options_from_json(j.start.at("run"));
    } catch (const nlohmann::json::exception& e) {
      throw_bad_input(j.file.string() + ":1", "run", std::string("unreadable: ") + e.what(), "rerun the suite");
    }
    const std::filesystem::path d = *dir;
    const std::filesystem::path json = o.json.empty() ? d / "report.json" : o.json;
    const std::filesystem::path junit = o.junit.empty() ? d / "junit.xml" : o.junit;
    OutputGuard()
        .input(j.file, "DIR")
        .input(o.suite, "run.suite_file")
        .output_file(json, "run.json")
        .output_file(junit, "run.junit")
        .output_file(d / "summary.md", "DIR")
        .output_file(d / "report.html", "DIR")
        .check();
    write_report_files(r, {json, junit, d / "summary.md", d / "report.html"});
    std::printf("%s", to_markdown(r).c_str());
    const int pass = r.count(Status::pass), fail = r.count(Status::fail), skip = r.count(Status::skip), err = r.count(Status::error);
    std::printf("\nmoe-harness report: %d passed, %d failed, %d skipped, %d errors%s; rebuilt %s, %s, %s and %s\n", pass,
                fail, skip, err, r.provenance.incomplete ? " (INCOMPLETE)" : "", json.c_str(), junit.c_str(),
                (d / "summary.md").c_str(), (d / "report.html").c_str());
    exit_code = r.provenance.incomplete              ? int(ExitCode::harness_error)
              : any_bad_input(r)                     ? int(ExitCode::bad_input)
              : err > 0                              ? int(ExitCode::harness_error)
              : fail > 0                           ? int(ExitCode::case_failed)
              : pass == 0                          ? int(ExitCode::nothing_checked)
                                                   : 0;
  });
}

}  // namespace moe::cli
