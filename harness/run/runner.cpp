#include "harness/run/runner.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <utility>

#include "fixtures/atomic_file.hpp"
#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/isolation/run_session.hpp"
#include "harness/run/kernel_registry.hpp"
#include "harness/run/progress.hpp"
#include "harness/pipeline/reference_cache.hpp"
#include "harness/run/report_dir.hpp"
#include "harness/isolation/stop_signal.hpp"
#include "reports/report_files.hpp"
#include "reports/run_report.hpp"

namespace moe {

bool glob_match(const std::string& p, const std::string& t) {
  std::size_t pi = 0, ti = 0, star = std::string::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) { ++pi; ++ti; }
    else if (pi < p.size() && p[pi] == '*') { star = pi++; mark = ti; }
    else if (star != std::string::npos) { pi = star + 1; ti = ++mark; }
    else return false;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool case_selected(const std::vector<std::string>& filters, const std::string& id) {
  bool any_positive = false, matched = false;
  for (const auto& f : filters) {
    if (!f.empty() && f[0] == '-') {
      if (glob_match(f.substr(1), id)) return false;
    } else {
      any_positive = true;
      matched |= glob_match(f, id);
    }
  }
  return !any_positive || matched;
}

namespace {

struct RunState {
  std::vector<CaseRecord> records;
  std::vector<bool> ran;
  std::vector<bool> interrupted;  // skipped because a stop signal came first: junit.xml's NOT JUDGED errors
  std::vector<std::pair<std::string, std::string>> tests;  // each slot's (kernel id, case id)
  ProgressListener* progress = nullptr;
};

// One (case, kernel): its record from the run session (judged by the executor, a worker process unless
// --no-isolation, or read back from the journal when resuming), as a GoogleTest result and a report record. The
// progress reporter lives here, in the supervisor: it hears of each case as it starts and ends.
class CaseTest : public testing::Test {
 public:
  CaseTest(RunSession* session, std::string kernel, std::string id, RunState* s, std::size_t slot)
      : session_(session), kernel_(std::move(kernel)), id_(std::move(id)), state_(s), slot_(slot) {}
  void TestBody() override {
    // After a stop signal only the cases already judged or in flight (several workers) get their record.
    if (session_->stop_requested() && !session_->judging(slot_)) skip_interrupted();
    if (IsSkipped()) return;
    state_->progress->case_started(kernel_, id_);
    std::optional<RunSession::Judged> judged = session_->judge(slot_);
    if (!judged) skip_interrupted();
    if (IsSkipped()) return;
    CaseRecord r = std::move(judged->record);
    state_->progress->case_done(r, judged->seconds);
    const auto w0 = std::chrono::steady_clock::now();
    for (const auto& [k, v] : r.metrics) RecordProperty(k, fmt::format("{:.9g}", v));
    RecordProperty("variant", r.variant);
    RecordProperty("verdict", to_string(r.status));  // "status" is reserved by GoogleTest
    state_->records[slot_] = r;
    state_->records[slot_].timing.write = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    state_->ran[slot_] = true;
    if (r.status == Status::skip) GTEST_SKIP() << r.reason;
    if (r.status == Status::fail) ADD_FAILURE() << "FAIL " << r.reason << "\n" << r.details;
    if (r.status == Status::error) ADD_FAILURE() << "HARNESS ERROR (not a kernel verdict): " << r.reason;
  }

 private:
  void skip_interrupted() {
    state_->interrupted[slot_] = true;
    GTEST_SKIP() << "not judged: the run was interrupted by " << session_->stop_signal_name();
  }

  RunSession* session_;
  std::string kernel_, id_;
  RunState* state_;
  std::size_t slot_;
};

// The arguments that select each kernel of the run again, for a rerun command: the executor's kernels are the
// build's (--kernel), then the plugins, then the caller's (those get none: `judge` reruns only its case anyway).
std::map<std::string, std::string> kernel_selection(RunSession& session) {
  std::map<std::string, std::string> select;
  const ExecConfig& config = session.config();
  const std::vector<KernelUnderTest*> kernels = session.executor().kernels();
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    if (i < config.kernel_ids.size())
      select[kernels[i]->id()] = "--kernel " + shell_quote(kernels[i]->id());
    else if (i < config.kernel_ids.size() + config.plugins.size())
      select[kernels[i]->id()] = "--plugin " + shell_quote(config.plugins[i - config.kernel_ids.size()]);
  }
  return select;
}

// GoogleTest with the user's --gtest arguments. An argument it does not know is a usage error: GoogleTest itself
// would print its help and run nothing. GoogleTest writes no XML: junit.xml is the report writers' (to_junit_xml),
// named by the case ids, its messages the verdicts' own.
constexpr int kMaxGtestRepeat = 1000;

void init_gtest(const std::vector<std::string>& user_args) {
  for (const std::string& a : user_args)
    if (a.rfind("--gtest_output", 0) == 0)
      throw_bad_input("command line", "--gtest", "'" + a + "': the JUnit XML path is set by moe-harness",
                      "use --junit FILE (default <report-dir>/junit.xml)");
  std::vector<std::string> args = {"moe-harness"};
  args.insert(args.end(), user_args.begin(), user_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);  // GoogleTest shifts argv[argc] down as it removes the flags it knows
  int argc = int(args.size());
  testing::InitGoogleTest(&argc, argv.data());
  if (argc > 1) {
    std::string unknown;
    for (int i = 1; i < argc; ++i) {
      if (i > 1) unknown += ' ';
      unknown += argv[i];
    }
    throw_bad_input("command line", "--gtest", "GoogleTest does not know: " + unknown,
                    "pass only GoogleTest's flags after --gtest (--gtest_filter=, --gtest_repeat=, --gtest_shuffle, "
                    "--gtest_random_seed=, --gtest_list_tests, ...; `moe-harness list --gtest` prints the test "
                    "names)");
  }
  GTEST_FLAG_SET(recreate_environments_when_repeating, true);  // StopRepetitions: a set-up before each repetition
  // A negative repeat is GoogleTest's "forever": a run that never writes its report, which a stop signal could not
  // end either (each repetition skips every test again). A bounded count is a run.
  const int repeat = GTEST_FLAG_GET(repeat);
  if (repeat < 1 || repeat > kMaxGtestRepeat)
    throw_bad_input("command line", "--gtest", "--gtest_repeat=" + std::to_string(repeat) + " is outside [1, " +
                                                   std::to_string(kMaxGtestRepeat) + "]",
                    "repeat a bounded number of times (--gtest_repeat=N, 1 <= N <= " +
                        std::to_string(kMaxGtestRepeat) + "), or loop over runs in a script");
}

// Every (case, kernel) as the GoogleTest test gtest_test_name(kernel).gtest_test_name(case), kernel by kernel; two
// that would share a name are refused before any is registered.
void register_tests(const Suite& suite, const std::vector<std::size_t>& cases, RunSession& session, RunState& state) {
  CaseExecutor& exec = session.executor();
  const std::vector<KernelUnderTest*> kernels = exec.kernels();
  std::map<std::string, std::string> names;
  for (KernelUnderTest* k : kernels)
    for (const std::size_t ci : cases) {
      const CaseSpec* c = &exec.cases()[ci];
      const std::string name = gtest_test_name(k->id()) + "." + gtest_test_name(c->id), what = k->id() + " " + c->id;
      const auto [it, fresh] = names.emplace(name, what);
      if (!fresh)
        throw_bad_input(suite.file, "variant",
                        "'" + it->second + "' and '" + what + "' have the same GoogleTest name " + name +
                            " ('-' and ':' are spelled '_' there)",
                        "give one of the cases another `variant` (kernels: ids that differ in more than '-', ':', '_')");
    }
  state.records.resize(cases.size() * kernels.size());
  state.ran.assign(state.records.size(), false);
  state.interrupted.assign(state.records.size(), false);
  std::size_t slot = 0;
  for (std::size_t ki = 0; ki < kernels.size(); ++ki)
    for (const std::size_t ci : cases) {
      const std::size_t s = slot++;
      const CaseSpec* c = &exec.cases()[ci];
      CaseRequest req;
      req.case_index = ci;
      req.kernel_index = ki;
      req.seed = session.options().seed;
      const auto colon = c->source.rfind(':');
      const int line = colon == std::string::npos ? 0 : std::atoi(c->source.c_str() + colon + 1);
      const std::string kernel = kernels[ki]->id();
      state.tests.push_back({kernel, c->id});
      session.add_test(s, req, gtest_test_name(kernel), gtest_test_name(c->id));
      testing::RegisterTest(gtest_test_name(kernel).c_str(), gtest_test_name(c->id).c_str(), nullptr, nullptr,
                            suite.file.c_str(), line, [&session, kernel, c, &state, s]() -> testing::Test* {
                              return new CaseTest(&session, kernel, c->id, &state, s);
                            });
    }
}

// The command that reruns one (case, kernel) alone: this binary, the suite, the kernel, and the options that change
// the verdict (seed, host budget, device requirement).
RerunRecipe make_rerun_recipe(const RunOptions& opt, const Suite& suite, RunSession& session) {
  RerunRecipe r;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  // A pip-installed CLI runs through its console script, which names itself here (moe_harness/_console.py): the
  // command a user typed, not the binary inside the package.
  const char* command = std::getenv("MOE_HARNESS_COMMAND");
  const std::string self = command && *command ? command : ec ? std::string("moe-harness") : exe.string();
  const bool named = resolve_suite(opt.suite) != std::filesystem::path(opt.suite);
  r.head = shell_quote(self) + " run --suite " +
           shell_quote(named ? opt.suite : std::filesystem::absolute(opt.suite).string());
  if (opt.seed) r.tail += " --seed " + std::to_string(*opt.seed);
  if (suite.sequence) r.tail += " --sequence-seed " + std::to_string(suite.sequence_seed);
  if (opt.host_budget > 0) r.tail += fmt::format(" --host-budget {}", opt.host_budget);
  if (opt.device.required) r.tail += " --require-device" + (opt.device.arch.empty() ? "" : " " + shell_quote(opt.device.arch));
  r.kernel_args = kernel_selection(session);
  for (const CaseSpec& c : suite.cases) r.suite_ids.push_back(c.id);
  r.sequence = suite.sequence;
  return r;
}

// Whether anything was checked, said on stderr when not: exit 4, or 0 for a GoogleTest shard whose own share judged
// nothing (the merged report of all shards judges the whole; every shard sees the same --filter selection).
int nothing_checked_code(const RunReport& report, const Suite& suite, std::size_t selected_cases, std::size_t tests) {
  const std::size_t judged = std::size_t(report.count(Status::pass) + report.count(Status::fail) + report.count(Status::error));
  if (judged > 0) return 0;
  const std::string why = "moe-harness: nothing checked (exit 4): ";
  if (selected_cases == 0) {
    std::fprintf(stderr, "%sthe filters selected no case of suite %s (%zu cases in %s); `moe-harness list --suite S "
                 "--filter GLOB` shows what a filter selects\n", why.c_str(), suite.name.c_str(), suite.cases.size(),
                 suite.file.c_str());
    return int(ExitCode::nothing_checked);
  }
  const char* shards = std::getenv("GTEST_TOTAL_SHARDS");
  if (shards && std::atoi(shards) > 1) {
    const char* index = std::getenv("GTEST_SHARD_INDEX");
    std::fprintf(stderr, "moe-harness: this shard (GTEST_SHARD_INDEX %s of GTEST_TOTAL_SHARDS %s) judged nothing "
                 "(%zu of its tests ran, all skipped): the merged report of every shard carries the verdict\n",
                 index ? index : "?", shards, report.cases.size());
    return 0;
  }
  if (report.cases.empty())
    std::fprintf(stderr, "%s--gtest_filter '%s' selected none of the %zu tests; GoogleTest names spell '-' and ':' "
                 "as '_' (`moe-harness list --gtest` prints them)\n", why.c_str(),
                 GTEST_FLAG_GET(filter).c_str(), tests);
  else
    std::fprintf(stderr, "%sall %zu (case, kernel) tests were skipped (the reasons are above and in report.json)\n",
                 why.c_str(), report.cases.size());
  return int(ExitCode::nothing_checked);
}

// A stop signal ends GoogleTest's repetitions (--gtest_repeat): the next repetition's global set-up throws the
// exception GoogleTest takes for a failure already reported, so RUN_ALL_TESTS returns at once (1) instead of running
// every test of every repetition left only to skip it (seconds per repetition of a large suite; docs/reliability.md
// "Stopping"). The XML GoogleTest wrote at the end of the repetition the signal came in stays. Set-up runs before
// each repetition (recreate_environments_when_repeating, set in init_gtest).
class StopRepetitions : public testing::Environment {
 public:
  void SetUp() override {
    if (!stop_requested()) return;
    cut_ = true;
    throw testing::AssertionException(
        testing::TestPartResult(testing::TestPartResult::kSkip, __FILE__, __LINE__, "stopped by a signal"));
  }
  // Whether it cut the repetitions short since the last call (the listeners then got no OnTestProgramEnd).
  bool take_cut() { return std::exchange(cut_, false); }

 private:
  bool cut_ = false;
};

StopRepetitions& stop_repetitions() {
  static StopRepetitions* env = static_cast<StopRepetitions*>(testing::AddGlobalTestEnvironment(new StopRepetitions));
  return *env;
}

// GoogleTest's listeners for one run: the progress reporter in, and GoogleTest's own printer out unless --verbose.
class ListenerScope {
 public:
  ListenerScope(ProgressListener* p, bool verbose) : p_(p) {
    auto& l = testing::UnitTest::GetInstance()->listeners();
    if (!verbose) delete l.Release(l.default_result_printer());
    l.Append(p_);
  }
  ~ListenerScope() { testing::UnitTest::GetInstance()->listeners().Release(p_); }

 private:
  ProgressListener* p_;
};

}  // namespace

// GoogleTest's sharding variables, checked as GoogleTest would want them before it reads them: its own parser
// aborts on a value that is not a number. Both or neither; 0 <= GTEST_SHARD_INDEX < GTEST_TOTAL_SHARDS <= 10^6.
static void check_gtest_shard_env() {
  const char* total = std::getenv("GTEST_TOTAL_SHARDS");
  const char* index = std::getenv("GTEST_SHARD_INDEX");
  if (!total && !index) return;
  const auto number = [](const char* name, const char* v, long lo, long hi) {
    long n = -1;
    const std::string s = v ? v : "";
    const bool digits = !s.empty() && s.size() <= 7 && s.find_first_not_of("0123456789") == std::string::npos;
    if (digits) n = std::stol(s);
    if (!v || !digits || n < lo || n > hi)
      throw_bad_input("environment", name,
                      v ? "'" + s + "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"
                        : std::string("is not set, but the other GoogleTest sharding variable is"),
                      "set GTEST_TOTAL_SHARDS=N and GTEST_SHARD_INDEX=I (0 <= I < N) together, or neither");
    return n;
  };
  const long n = number("GTEST_TOTAL_SHARDS", total, 1, 1000000);
  number("GTEST_SHARD_INDEX", index, 0, n - 1);
}

int run_suite(const RunOptions& requested) {
  check_gtest_shard_env();  // before GoogleTest, the journal or a report directory sees them
  // What runs. Every input problem (suite, kernels, --gtest arguments, test names, a journal to resume) is found
  // before anything is written: the report directory claimed below is removed again when one stops the run.
  RunSession session(requested);  // the executor; resuming, the run's options and records from its journal
  const RunOptions& opt = session.options();
  const Suite suite = load_suite_file(resolve_suite(opt.suite), opt.sequence_seed);
  if (suite.sequence)  // the seed first, so that a run that dies half-way can still be replayed
    std::fprintf(stderr, "moe-harness: call sequence %s: %zu steps, order %s, seed %llu (replay: --sequence-seed %llu)\n",
                 suite.name.c_str(), suite.cases.size(), suite.sequence_order.c_str(),
                 static_cast<unsigned long long>(suite.sequence_seed), static_cast<unsigned long long>(suite.sequence_seed));
  CaseExecutor& exec = session.executor();
  std::vector<std::size_t> cases;  // indexes into exec.cases(), the suite's cases in order
  for (std::size_t i = 0; i < exec.cases().size(); ++i)
    if (case_selected(opt.filters, exec.cases()[i].id)) cases.push_back(i);
  const std::vector<KernelUnderTest*> kernels = exec.kernels();
  check_unique_kernel_ids(kernels);  // a plugin given twice, or named like a built-in kernel

  // Where the reports go: every output path is checked before any work.
  run_output_guard(opt).check();  // and none of them is, or replaces, an input
  ReportDir report_dir(opt.report_dir);  // locked: one run at a time
  const std::filesystem::path& dir = report_dir.path();
  const std::filesystem::path junit = opt.junit.empty() ? dir / "junit.xml" : opt.junit;
  const std::filesystem::path json = opt.json.empty() ? dir / "report.json" : opt.json;

  // Registration: GoogleTest's flags, then one test per (case, kernel), each judged through the session (CaseTest).
  init_gtest(opt.gtest_args);
  RunState state;
  register_tests(suite, cases, session, state);
  session.check_resumed_slots();
  if (GTEST_FLAG_GET(list_tests)) {  // prints the names; runs and writes nothing (and starts no worker)
    GTEST_FLAG_SET(output, "");
    return RUN_ALL_TESTS();
  }
  report_dir.keep();
  // The live device as the process that judges the cases sees it (isolated: the first worker's detection).
  const DeviceDetection& device = exec.device();

  // The run.
  RunReport report;
  Provenance& p = report.provenance;
  std::vector<std::pair<std::string, std::string>> kernel_versions;
  for (KernelUnderTest* k : kernels) kernel_versions.push_back({k->id(), k->version()});
  p = make_provenance(suite, kernel_versions, device, opt.seed);
  p.start_time = utc_now_iso8601();
  session.begin(dir, p);  // the journal; resuming, the start time becomes the original run's
  ProgressListener progress(stderr, opt.verbose);
  state.progress = &progress;
  int gtest_rc = 0;
  {
    const ListenerScope listening(&progress, opt.verbose);
    StopRepetitions& stop = stop_repetitions();
    try {
      gtest_rc = RUN_ALL_TESTS();
    } catch (const testing::AssertionException&) {  // --gtest_catch_exceptions=0: GoogleTest let it through
      gtest_rc = 1;
    }
    if (stop.take_cut()) progress.OnTestProgramEnd(*testing::UnitTest::GetInstance());  // its ticker ends here
  }
  p.end_time = utc_now_iso8601();

  // The summary: reports, the recap on the terminal, the exit code.
  for (std::size_t i = 0; i < state.records.size(); ++i)
    if (state.ran[i]) report.cases.push_back(state.records[i]);
    else if (state.interrupted[i]) report.unjudged.push_back(state.tests[i]);
  session.finish(p, report.cases.size());
  write_report_files(report, {json, junit, dir / "summary.md", dir / "report.html"});
  const int pass = report.count(Status::pass), fail = report.count(Status::fail), skip = report.count(Status::skip),
            err = report.count(Status::error);
  if (opt.verbose) std::printf("\n%s\n", to_markdown(report).c_str());
  print_recap(stdout, report.cases, make_rerun_recipe(opt, suite, session));
  // The note matters when GPU kernels were asked for, or the default set was (a CPU-only build has none to run).
  bool device_kernels = opt.kernels.empty() && opt.extra_kernels.empty() && opt.plugins.empty();
  for (KernelUnderTest* k : kernels) device_kernels |= k->needs_device();
  if (!device.device && device_kernels)
    std::printf("NOTE: no GPU here (%s): GPU kernels did not run; %d case(s) skipped in all.\n",
                device.message.c_str(), skip);
  if (!opt.reference_cache.empty()) {
    const ExecStats st = exec.stats();  // of every process that judged cases
    std::printf("reference cache %s: references %zu hit(s), %zu computed; expert weights %zu loaded, %zu generated "
                "(reference version %.12s)\n",
                opt.reference_cache.c_str(), st.reference_hits, st.reference_misses, st.weight_disk_hits,
                st.weight_misses - st.weight_disk_hits, reference_version().c_str());
  }
  std::printf("moe-harness: %d passed, %d failed, %d skipped, %d errors in %s; report: %s\n", pass, fail, skip, err,
              format_duration(progress.elapsed_s()).c_str(),
              std::filesystem::absolute(dir / "report.html").string().c_str());
  if (session.stop_requested()) std::printf("moe-harness: %s\n", p.incomplete_reason.c_str());
  std::fflush(stdout);
  if (session.stop_requested()) return session.exit_code_for_stop();
  if (any_bad_input(report)) return int(ExitCode::bad_input);
  if (err > 0) return int(ExitCode::harness_error);
  if (fail > 0 || gtest_rc != 0) return int(ExitCode::case_failed);
  return nothing_checked_code(report, suite, cases.size(), state.records.size());
}

}  // namespace moe
