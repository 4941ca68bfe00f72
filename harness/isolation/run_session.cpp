#include "harness/isolation/run_session.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/isolation/jobs.hpp"
#include "harness/isolation/journal_checks.hpp"
#include "harness/isolation/journal_schema.hpp"
#include "harness/isolation/stop_signal.hpp"
#include "harness/isolation/wire.hpp"
#include "harness/run/kernel_registry.hpp"
#include "harness/tuning/table_set.hpp"
#include "reports/record_json.hpp"

namespace moe {
namespace {

std::string absolute_path(const std::filesystem::path& p) {
  return p.empty() ? std::string() : std::filesystem::absolute(p).lexically_normal().string();
}

// A plugin path made absolute for the worker and the journal; a bare name stays bare, for the loader to refuse.
std::string plugin_path(const std::string& p) {
  return std::filesystem::path(p).has_parent_path() ? absolute_path(p) : p;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// `run --dispatch-table`: the table set's paths, each absolute, ':'-separated (table_set.hpp); "" for none.
std::string table_list(const std::filesystem::path& tables) {
  return tables.empty() ? "" : absolute_table_list(split_table_paths({tables.string()}));
}

}  // namespace

// `run --resume DIR` given the run's own options: they are re-derived from that command line as the run wrote them
// (run_options_to_json) and each must be the journal's start line's, else bad input naming the key (run.<key>) with
// both values. The shard variables are the environment's, compared with the start line below for every resume.
static void check_resume_command_line(const RunOptions& given, const nlohmann::ordered_json& run,
                                      const std::string& where) {
  const nlohmann::ordered_json now = run_options_to_json(given);
  std::string first, problem, others;
  for (const auto& [key, value] : now.items()) {
    if (key == "gtest_total_shards" || key == "gtest_shard_index") continue;
    const nlohmann::ordered_json was = run.contains(key) ? run[key] : nlohmann::ordered_json();
    if (value == was) continue;
    if (first.empty()) {
      first = "run." + key;
      problem = fmt::format("the command line gives {}, the run this journal holds had {}", value.dump(), was.dump());
    } else {
      others += (others.empty() ? "" : ", ") + ("run." + key);
    }
  }
  if (!first.empty())
    throw_bad_input(where, first, problem + (others.empty() ? "" : " (also differing: " + others + ")"),
                    "give --resume the run's own options (or --resume DIR alone: the journal's options are used), "
                    "or start a new run into another --report-dir");
}

// A call sequence runs its steps in order on ONE kernel object: one worker, no shuffling or sharding of its tests.
static void check_sequence_run(const RunOptions& o) {
  const std::string fix = "a call sequence's steps run in order on one kernel object; replay another order with "
                          "--sequence-seed N, select steps with --filter";
  if (o.jobs > 1)
    throw_bad_input("command line", "--jobs", "--jobs " + std::to_string(o.jobs) + " with the call sequence " + o.suite +
                                                  " (its steps would run on several kernel objects)", "drop --jobs: " + fix);
  for (const std::string& a : o.gtest_args)
    if (a.rfind("--gtest_shuffle", 0) == 0 && a != "--gtest_shuffle=0" && a != "--gtest_shuffle=false")
      throw_bad_input("command line", "--gtest", "'" + a + "' with the call sequence " + o.suite, "drop it: " + fix);
  if (const std::string s = env("GTEST_SHUFFLE"); !s.empty() && s != "0" && s != "false")
    throw_bad_input("environment", "GTEST_SHUFFLE", "'" + s + "' with the call sequence " + o.suite, "unset it: " + fix);
  if (const std::string n = env("GTEST_TOTAL_SHARDS"); !n.empty() && n != "1")
    throw_bad_input("environment", "GTEST_TOTAL_SHARDS", "'" + n + "' with the call sequence " + o.suite +
                                                             " (each shard would run some steps on its own kernel object)",
                    "run it unsharded (unset GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX): " + fix);
}

nlohmann::ordered_json run_options_to_json(const RunOptions& o) {
  std::vector<std::string> plugins;
  for (const auto& p : o.plugins) plugins.push_back(plugin_path(p));
  return {{"suite_file", absolute_path(resolve_suite(o.suite))}, {"filters", o.filters}, {"kernels", o.kernels},
          {"plugins", plugins}, {"seed", o.seed ? nlohmann::ordered_json(*o.seed) : nlohmann::ordered_json(nullptr)},
          {"junit", absolute_path(o.junit)}, {"json", absolute_path(o.json)}, {"device_required", o.device.required},
          {"device_arch", o.device.arch}, {"reference_cache", absolute_path(o.reference_cache)}, {"timing", o.timing}, {"token_probes", o.token_probes},
          {"sequence_seed", o.sequence_seed ? nlohmann::ordered_json(*o.sequence_seed) : nlohmann::ordered_json(nullptr)},
          {"host_budget", o.host_budget}, {"dispatch", wire::dispatch_to_json(o.dispatch)},
          {"dispatch_table", table_list(o.dispatch_table)}, {"gtest_args", o.gtest_args},
          {"gtest_total_shards", env("GTEST_TOTAL_SHARDS")}, {"gtest_shard_index", env("GTEST_SHARD_INDEX")}};
}

RunOptions run_options_from_json(const nlohmann::ordered_json& j) {
  RunOptions o;
  o.suite = j.at("suite_file");
  o.filters = j.at("filters").get<std::vector<std::string>>();
  o.kernels = j.at("kernels").get<std::vector<std::string>>();
  o.plugins = j.at("plugins").get<std::vector<std::string>>();
  if (!j.at("seed").is_null()) o.seed = j.at("seed").get<std::uint64_t>();
  o.junit = j.at("junit").get<std::string>();
  o.json = j.at("json").get<std::string>();
  o.device.required = j.at("device_required");
  o.device.arch = j.at("device_arch");
  o.reference_cache = j.at("reference_cache").get<std::string>();
  o.timing = j.at("timing");
  o.token_probes = j.value("token_probes", true);  // journals before the token probes: on, as run had them
  if (j.contains("sequence_seed") && !j.at("sequence_seed").is_null()) o.sequence_seed = j.at("sequence_seed").get<std::uint64_t>();
  o.host_budget = j.at("host_budget");
  if (j.contains("dispatch")) o.dispatch = wire::dispatch_options(j.at("dispatch"));  // journals before --dispatch: none
  if (j.contains("dispatch_table")) o.dispatch_table = j.at("dispatch_table").get<std::string>();
  o.gtest_args = j.at("gtest_args").get<std::vector<std::string>>();
  return o;
}

ExecConfig exec_config_for(const RunOptions& o) {
  ExecConfig c;
  c.suite_files = {absolute_path(resolve_suite(o.suite))};
  // The kernel list run has always built: the named ones (every one of this build when none is named and no
  // plugin is given), then the plugins.
  if (!o.kernels.empty() || (o.plugins.empty() && o.extra_kernels.empty()))
    for (const auto& k : make_kernels(o.kernels, o.host_budget, o.dispatch)) c.kernel_ids.push_back(k->id());
  for (const auto& p : o.plugins) c.plugins.push_back(plugin_path(p));
  c.host_budget = o.host_budget;
  c.dispatch = o.dispatch;
  c.timing = o.timing;
  c.token_probes = o.token_probes;
  c.sequence_seed = o.sequence_seed;
  c.reference_cache = absolute_path(o.reference_cache);
  c.device = o.device;
  c.dispatch_table = table_list(o.dispatch_table);
  return c;
}

RunSession::RunSession(const RunOptions& requested) : opt_(requested) {
  if (!requested.resume.empty()) {
    resumed_ = read_journal(requested.resume);
    check_journal_records(*resumed_);
    const nlohmann::ordered_json& start = resumed_->start;
    const std::string where = resumed_->file.string() + ":1";
    if (!start.contains("run_digest"))  // this build writes it; a resume takes only its own build's journals
      throw_bad_input(where, "run_digest", "missing: the run's options cannot be told from edited ones",
                      "resume a journal this build wrote, or rerun the suite");
    if (requested.resume_checks_options) check_resume_command_line(requested, start.at("run"), where);
    try {
      opt_ = run_options_from_json(start.at("run"));
    } catch (const nlohmann::json::exception& e) {
      throw_bad_input(where, "run", std::string("the journal's run options are unreadable: ") + e.what(), "rerun the suite");
    }
    opt_.report_dir = requested.resume;
    opt_.isolation = requested.isolation;
    opt_.case_timeout_s = requested.case_timeout_s;
    opt_.jobs = requested.jobs;
    opt_.job_threads = requested.job_threads;
    opt_.verbose = requested.verbose;
    const Provenance was = journal_provenance(*resumed_);
    if (was.harness_commit != harness_build_stamp())
      throw_bad_input(where, "provenance.harness_commit",
                      "the run was judged by harness " + was.harness_commit + ", this binary is " + harness_build_stamp(),
                      "resume with the binary that started the run, or rerun the suite");
    if (load_suite_file(opt_.suite, opt_.sequence_seed).file_hash != was.suite_hash)
      throw_bad_input(opt_.suite, "suite_hash", "the suite file changed since the run started",
                      "restore it, or rerun the suite");
    const nlohmann::ordered_json& run = start.at("run");
    if (run.value("gtest_total_shards", "") != env("GTEST_TOTAL_SHARDS") ||
        run.value("gtest_shard_index", "") != env("GTEST_SHARD_INDEX"))
      throw_bad_input(where, "run.gtest_total_shards", "the run was a shard of another GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX",
                      "resume with the shard environment the run had");
  }
  if (load_suite_file(resolve_suite(opt_.suite), opt_.sequence_seed).sequence) check_sequence_run(opt_);
  config_ = exec_config_for(opt_);
  executor_ = std::make_unique<CaseExecutor>(
      config_,
      IsolationOptions{opt_.isolation, opt_.case_timeout_s, opt_.jobs, threads_per_job(opt_.jobs, opt_.job_threads)},
      opt_.extra_kernels);
  if (resumed_) {
    const Provenance was = journal_provenance(*resumed_);
    std::vector<std::pair<std::string, std::string>> now;
    for (KernelUnderTest* k : executor_->kernels()) now.push_back({k->id(), k->version()});
    if (now != was.kernels)
      throw_bad_input(resumed_->file.string() + ":1", "provenance.kernels",
                      "the kernels (ids or versions) differ from the ones the run started with",
                      "resume with the same kernels and plugin builds, or rerun the suite");
  }
}

RunSession::~RunSession() = default;

void RunSession::begin(const std::filesystem::path& dir, Provenance& p) {
  dir_ = dir;
  for (const std::string& f : remove_stale_temp_files(dir_))
    std::fprintf(stderr, "moe-harness: removed %s, a temporary file of a run that was killed\n", (dir_ / f).c_str());
  if (!opt_.reference_cache.empty())
    for (const std::string& f : remove_stale_temp_files(opt_.reference_cache))
      std::fprintf(stderr, "moe-harness: removed %s, a temporary file of a run that was killed\n",
                   (opt_.reference_cache / f).c_str());
  journal_ = std::make_unique<JournalWriter>(journal_path(dir_), resumed_.has_value());
  if (resumed_) {
    p.start_time = journal_provenance(*resumed_).start_time;
    journal_->write({{"type", "resume"}, {"harness_commit", harness_build_stamp()}});
    std::fprintf(stderr, "moe-harness: resuming %s: %zu record(s) in its journal are kept, the rest is judged now\n",
                 dir_.c_str(), resumed_->records.size());
  } else {
    const nlohmann::ordered_json run = run_options_to_json(opt_);
    journal_->write({{"type", "start"}, {"journal_version", kJournalVersion}, {"provenance", provenance_to_json(p)},
                     {"run", run}, {"run_digest", run_digests(run)}});
  }
  // Records in completion order, one writer (this process); a stop signal holds back every case not yet started.
  executor_->set_completion([this](CaseExecutor::Ticket t, const CaseResult& res) {
    const std::size_t slot = ticket_slots_.at(t);
    journal_->write({{"type", "record"}, {"slot", slot}, {"record", case_record_to_json(res.record)}});
  });
  executor_->set_hold_back([] { return moe::stop_requested(); });
  // A second signal stops at once (the journal keeps what was judged).
  stop_.emplace(executor_->isolated() ? "stopping: the case(s) in flight get 2 s to end, then are abandoned"
                                      : "stopping after the case in flight");
}

void RunSession::add_test(std::size_t slot, const CaseRequest& r, const std::string& suite, const std::string& name) {
  if (requests_.size() <= slot) requests_.resize(slot + 1);
  requests_[slot] = r;
  slots_[{suite, name}] = slot;
}

void RunSession::check_resumed_slots() const {
  if (!resumed_) return;
  for (const auto& [slot, rec] : resumed_->records) {
    const std::string where = fmt::format("{}:{}", resumed_->file.string(), resumed_->record_lines.at(slot));
    if (slot >= requests_.size())
      throw_bad_input(where, "slot", fmt::format("foreign record: slot {} ({} {}) is past the run's {} test(s)", slot,
                                                 rec.kernel, rec.id, requests_.size()),
                      "a journal holds the records of one run only: restore it, or rerun the suite");
    const CaseRequest& r = requests_[slot];
    const std::string& id = executor_->cases().at(r.case_index).id;
    const std::string& kernel = executor_->kernels().at(r.kernel_index)->id();
    if (rec.id != id || rec.kernel != kernel)
      throw_bad_input(where, "slot", fmt::format("foreign record: slot {} holds {} {}, the run has {} {} there", slot,
                                                 rec.kernel, rec.id, kernel, id),
                      "a journal holds the records of one run only: restore it, or rerun the suite");
  }
}

void RunSession::queue_from(std::size_t slot) {
  std::vector<std::size_t> order;  // the tests GoogleTest runs from here on, in its order (shuffled or not)
  if (executor_->jobs() > 1) {
    const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
    bool from_here = false;
    for (int i = 0; i < unit.total_test_suite_count(); ++i) {
      const testing::TestSuite& suite = *unit.GetTestSuite(i);
      for (int j = 0; j < suite.total_test_count(); ++j) {
        const testing::TestInfo& info = *suite.GetTestInfo(j);
        const auto it = slots_.find({suite.name(), info.name()});
        if (!info.should_run() || it == slots_.end()) continue;
        from_here |= it->second == slot;
        if (from_here) order.push_back(it->second);
      }
    }
  }
  if (order.empty() || order.front() != slot) order.insert(order.begin(), slot);
  for (const std::size_t s : order) {
    if (tickets_.count(s) || (resumed_ && resumed_->records.count(s))) continue;
    const CaseExecutor::Ticket t = executor_->submit(requests_.at(s));
    tickets_[s] = t;
    ticket_slots_[t] = s;
  }
}

std::optional<RunSession::Judged> RunSession::judge(std::size_t slot) {
  if (!planned_) {  // GoogleTest applies filters and sharding inside RUN_ALL_TESTS: the count exists from here on
    planned_ = true;
    journal_->write({{"type", "plan"}, {"tests", testing::UnitTest::GetInstance()->test_to_run_count()}});
  }
  const CaseRequest& r = requests_.at(slot);
  const CaseSpec& c = executor_->cases().at(r.case_index);
  const std::string kernel = executor_->kernels().at(r.kernel_index)->id();
  if (resumed_) {
    const auto it = resumed_->records.find(slot);
    if (it != resumed_->records.end()) {
      if (it->second.id != c.id || it->second.kernel != kernel)
        throw_bad_input(resumed_->file.string(), "record", fmt::format("slot {} holds {} {}, the run has {} {} there",
                                                                       slot, it->second.kernel, it->second.id, kernel, c.id),
                        "resume with the options the run started with, or rerun the suite");
      return Judged{it->second, 0};
    }
  }
  if (!tickets_.count(slot)) queue_from(slot);
  const CaseExecutor::Ticket t = tickets_.at(slot);
  std::optional<CaseResult> res = executor_->wait(t);  // journaled by the completion callback
  tickets_.erase(slot);
  ticket_slots_.erase(t);
  if (!res) return std::nullopt;
  return Judged{std::move(res->record), res->seconds};
}

bool RunSession::judging(std::size_t slot) const {
  if (resumed_ && resumed_->records.count(slot)) return true;
  const auto it = tickets_.find(slot);
  return it != tickets_.end() && executor_->started(it->second);
}

bool RunSession::stop_requested() const { return moe::stop_requested(); }

std::string RunSession::stop_signal_name() const { return moe::stop_signal_name(); }

int RunSession::exit_code_for_stop() const { return moe::exit_code_for_stop(); }

void RunSession::finish(Provenance& p, std::size_t judged) {
  const std::string sig = stop_signal_name();
  if (!sig.empty()) {
    p.incomplete = true;
    const std::vector<std::string> abandoned = executor_->abandoned();
    std::string gone;
    for (const std::string& a : abandoned) gone += (gone.empty() ? "" : ", ") + a;
    p.incomplete_reason = fmt::format("interrupted by {}: {} of the {} selected test(s) judged{}; `moe-harness run "
                                      "--resume {}` judges the rest",
                                      sig, judged, testing::UnitTest::GetInstance()->test_to_run_count(),
                                      abandoned.empty() ? std::string()
                                                        : fmt::format(" ({} in flight abandoned, not judged, after "
                                                                      "{:g} s: {})", abandoned.size(),
                                                                      kStopGraceSeconds, gone),
                                      dir_.string());
  }
  if (journal_) journal_->write({{"type", "end"}, {"interrupted", sig}});
  stop_.reset();
}

}  // namespace moe
