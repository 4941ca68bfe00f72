// What `moe-harness run` prints (docs/cli.md "Terminal output"). While the tests run, on stderr: on a terminal one live
// line (done/total, pass/fail/skip, elapsed, ETA, the running case) redrawn in place; elsewhere (CI logs) no
// carriage-return animation, a line every kProgressLogInterval seconds instead; failures and harness errors as one
// line each the moment they happen. After the run, on stdout: skips grouped by reason, a recap of the failures each
// with the command that reruns exactly that case. Colour only on a terminal, and never with NO_COLOR set or
// TERM=dumb. With --verbose GoogleTest's own log stays on and every case gets a line as it ends.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "reports/run_report.hpp"

namespace moe {

inline constexpr double kProgressLogInterval = 10;  // seconds between progress lines when stderr is no terminal

struct TerminalStyle {
  bool live = false;    // a terminal: redraw one line with '\r'
  bool colour = false;  // ANSI colours (a terminal, NO_COLOR unset, TERM not dumb)
};
TerminalStyle terminal_style(std::FILE* f);

// The progress of one run. A GoogleTest listener for the test count (known only once GoogleTest has applied its
// filter and sharding) and the end of the program; the test body reports each case as it starts and ends.
class ProgressListener : public testing::EmptyTestEventListener {
 public:
  ProgressListener(std::FILE* out, bool verbose);
  ~ProgressListener() override;
  void OnTestProgramStart(const testing::UnitTest& unit) override;
  void OnTestProgramEnd(const testing::UnitTest& unit) override;
  void case_started(const std::string& kernel, const std::string& id);
  void case_done(const CaseRecord& r, double seconds);
  double elapsed_s() const;

 private:
  std::string status_line(bool final) const;  // callers hold mu_
  void draw(bool final);                      // callers hold mu_
  void tick();

  std::FILE* out_;
  TerminalStyle style_;
  bool verbose_;
  std::chrono::steady_clock::time_point t0_, last_log_, case_t0_;
  std::size_t total_ = 0;
  bool endless_ = false;  // --gtest_repeat=-1: no total, no ETA
  std::size_t done_ = 0, pass_ = 0, fail_ = 0, skip_ = 0, error_ = 0;
  std::string running_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;
};

// How to rerun one (case, kernel) alone: the command up to the filter (binary, subcommand, suite), the options that
// change the verdict, and for each kernel id the arguments that select that kernel; a kernel without an entry (built
// by the caller, as `judge` does) gets no rerun line, since the same command already reruns only that case.
struct RerunRecipe {
  std::string head;                                // "/path/moe-harness run --suite smoke"
  std::string tail;                                // " --seed 7 --require-device"
  std::map<std::string, std::string> kernel_args;  // "host-contract" -> "--kernel host-contract"
  std::vector<std::string> suite_ids;              // every case id of the suite, to check the filter is exact
  // A call sequence (docs/judging.md "Call sequences"): a step's verdict depends on the steps before it on the same
  // kernel object, so its command selects every step up to it (suite_ids are in run order), not the step alone.
  bool sequence = false;
  std::string command(const std::string& kernel, const std::string& case_id) const;  // "" when none
  // How many other cases of the suite `--filter case_id` selects besides this one (0 for every canonical id).
  std::size_t also_selected(const std::string& case_id) const;
};

// A word the shell reads back unchanged (single quotes where anything but [A-Za-z0-9_./+=:,@%-] occurs).
std::string shell_quote(const std::string& s);

// Skips with the same kernel and reason, numbers aside (each case's own FLOP count, CU count, ...), are one group.
std::string skip_group_key(const CaseRecord& r);

// The end of a run on stdout: skips grouped by reason, then every failure and harness error with its rerun command,
// the first ten with their verdict as pytest prints it (the case's place, its details: metrics, worst tokens, statistics).
void print_recap(std::FILE* out, const std::vector<CaseRecord>& cases, const RerunRecipe& rerun);

std::string format_duration(double seconds);

}  // namespace moe
