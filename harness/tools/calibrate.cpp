#include "harness/tools/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "fixtures/atomic_file.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/isolation/executor.hpp"
#include "harness/isolation/jobs.hpp"
#include "harness/run/kernel_registry.hpp"
#include "harness/run/runner.hpp"
#include "harness/case/case_thresholds.hpp"
#include "harness/isolation/stop_signal.hpp"
#include "reports/run_report.hpp"

namespace moe {
namespace {
// One row of the table: the runs of one kernel on one weight/act scheme judged by the same thresholds (a scheme's
// cases can differ there, e.g. a shared expert with quantized activations, or a case's own override: each such
// set of thresholds gets its own row, so that every margin is taken against the thresholds its runs were judged by).
// One systematic statistic over a row's runs: the largest |z| and |effect| and the run closest to failing (it fails
// when both pass their limits: the smaller share of the two), each with its case and seed; runs where it did not run.
struct StatWorst {
  int ran = 0, not_run = 0;
  double z = 0, effect = 0, closest = 0, z_threshold = 0, floor = 0;  // z: the tested z (signed for channel)
  std::string z_at, effect_at, closest_at, a_not_run;
  void note(const StatisticRecord& s, const std::string& at) {
    // The limits shown are those of the runs it ran on (a statistic not run has no data-dependent limit: the
    // expert statistic's floor depends on whether the reference kept its slot contributions).
    if (s.ran() || ran == 0) z_threshold = s.z_threshold, floor = s.effect_floor;
    if (!s.ran()) {
      if (not_run++ == 0) a_not_run = at + ": " + s.status;
      return;
    }
    const double share = s.closeness();
    if (ran++ == 0 || s.tested_z() > z) { z = s.tested_z(); z_at = at; }
    if (ran == 1 || std::fabs(s.effect) > std::fabs(effect)) { effect = s.effect; effect_at = at; }
    if (ran == 1 || share > closest) { closest = share; closest_at = at; }
  }
};

struct Worst {
  std::map<std::string, StatWorst> systematic;  // by statistic
  int runs = 0, failed = 0, skipped = 0;
  // The worst values the verdict judged (a requantization band's tokens excluded where the band held: the metrics
  // the thresholds are compared with, so the margin is thr/worst as judged), and the raw worst beside them.
  double min_cos = 1.0, max_rel = 0.0, mismatch = 0.0, raw_min_cos = 1.0, raw_max_rel = 0.0;
  std::string min_cos_at, max_rel_at, mismatch_at, raw_min_cos_at, raw_max_rel_at;  // "case id, seed N" of each
  Thresholds th;
  std::string example_failure;
};

std::string threshold_tag(const Thresholds& t) {
  return fmt::format("min_cos {:.5f}, max_rel {:.3e}, atol {:.1e}, rtol {:.1e}, mismatch {:.3e}", t.min_cos, t.max_rel,
                     t.atol, t.rtol, t.max_mismatch_fraction);
}
using Rows = std::map<std::pair<std::string, std::string>, Worst>;

// The systematic statistics per row: worst |z| and |effect| beside their limits, the run closest to failing, and
// how many runs could not compute the statistic (with one example reason).
void print_systematic(const Rows& by, std::map<std::string, int>& sets_per_scheme, nlohmann::ordered_json& j) {
  std::printf("\n| kernel | scheme (weight/act) | statistic | ran | not run | worst z (channel: z, others: \\|z\\|) | z threshold | worst \\|effect\\| | "
              "floor | closest to failing (share of the nearer limit) |\n|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<std::string> where;
  for (const auto& [key, w] : by) {
    if (w.runs == 0) continue;
    const std::string row = sets_per_scheme[key.first] > 1 ? key.first + " (" + key.second + ")" : key.first;
    const auto bar = row.find(" | ");
    for (const auto& [name, s] : w.systematic) {
      std::printf("| %s | %s | %s | %d | %d | %s | %g | %s | %g | %s |\n", row.substr(0, bar).c_str(),
                  row.substr(bar + 3).c_str(), name.c_str(), s.ran, s.not_run,
                  s.ran ? fmt::format("{:.3g}", s.z).c_str() : "-", s.z_threshold,
                  s.ran ? fmt::format("{:.3e}", std::fabs(s.effect)).c_str() : "-", s.floor,
                  s.ran ? fmt::format("{:.1f}%", 100 * s.closest).c_str() : "-");
      j["schemes"][row]["systematic"][name] = {
          {"ran", s.ran}, {"not_run", s.not_run}, {"worst_tested_z", s.z}, {"worst_z_at", s.z_at},
          {"z_threshold", s.z_threshold}, {"worst_abs_effect", std::fabs(s.effect)}, {"worst_effect_at", s.effect_at},
          {"effect_floor", s.floor}, {"closest_share", s.closest}, {"closest_at", s.closest_at},
          {"example_not_run", s.a_not_run}};
      if (s.ran) where.push_back(fmt::format("{} {}: worst |z| at {}; closest at {}", row, name, s.z_at, s.closest_at));
    }
  }
  std::printf("\n");
  for (const std::string& l : where) std::printf("%s\n", l.c_str());
}

}  // namespace

int run_calibration(const CalibrateOptions& opt) {
  const Suite suite = load_suite_file(resolve_suite(opt.suite));
  ExecConfig config;
  config.suite_files = {resolve_suite(opt.suite).string()};
  for (const auto& k : make_kernels(opt.kernels.empty() ? std::vector<std::string>{"host"} : opt.kernels, 0, opt.dispatch))
    config.kernel_ids.push_back(k->id());
  config.dispatch = opt.dispatch;
  config.timing = false;  // verdict metrics only; speed is the bench suite's business
  const StopSignals stop("stopping: the runs in flight get 2 s to end, then the partial table is written");
  CaseExecutor exec(config, {opt.isolation, opt.case_timeout_s, opt.jobs, threads_per_job(opt.jobs, opt.job_threads)});
  exec.set_hold_back([] { return stop_requested(); });
  const std::vector<KernelUnderTest*> kernels = exec.kernels();
  int folded = 0;  // runs folded into the table (a stop signal ends the folding early)
  std::map<std::pair<std::string, std::string>, Worst> by;  // (kernel | weight/act scheme, thresholds)
  // Every run queued first (several workers judge them at once, --jobs), then folded in this order, so the table
  // is the same for any number of workers. Seed-major: the cases of one seed share generated weights (the cache),
  // so each weight set is made once per seed and worker.
  std::vector<CaseExecutor::Ticket> tickets;
  for (std::size_t ki = 0; ki < kernels.size(); ++ki)
    for (int seed = 1; seed <= opt.seeds && !stop_requested(); ++seed)
      for (std::size_t ci = 0; ci < exec.cases().size(); ++ci) {
        const CaseSpec& c = exec.cases()[ci];
        if (!case_selected(opt.filters, c.id) || c.tier == Tier::exact) continue;
        CaseRequest req;
        req.case_index = ci;
        req.kernel_index = ki;
        req.seed = std::uint64_t(seed);
        req.rerun_probe = false;
        tickets.push_back(exec.submit(req));
      }
  std::size_t next = 0;
  bool stopped = false;  // a run was dropped or abandoned by a stop signal: the folding ends there
  for (std::size_t ki = 0; ki < kernels.size() && !stopped; ++ki) {
    KernelUnderTest* k = kernels[ki];
    for (int seed = 1; seed <= opt.seeds && !stopped; ++seed)
      for (std::size_t ci = 0; ci < exec.cases().size() && !stopped; ++ci) {
        const CaseSpec& c = exec.cases()[ci];
        if (!case_selected(opt.filters, c.id) || c.tier == Tier::exact) continue;
        const std::string scheme = k->id() + " | " + std::string(name(c.problem.quant.weight)) + "/" +
                                   std::string(name(c.problem.quant.act));
        std::optional<CaseResult> res;
        if (next < tickets.size()) res = exec.wait(tickets[next++]);  // fewer when a signal cut the queuing short
        if (!res) {
          stopped = true;
          break;
        }
        ++folded;
        const Thresholds th = case_thresholds(c);
        Worst& w = by[{scheme, threshold_tag(th)}];
        w.th = th;
        const CaseRecord r = std::move(res->record);
        if (r.status == Status::skip) { ++w.skipped; continue; }
        ++w.runs;
        if (r.status != Status::pass) {
          ++w.failed;
          if (w.example_failure.empty()) w.example_failure = fmt::format("{} seed {}: {}", c.id, seed, r.reason);
        }
        if (r.metrics.count("min_cos")) {
          const std::string at = fmt::format("{}, seed {}", c.id, seed);
          auto note = [&](double v, double& worst, std::string& where, bool lower_is_worse) {
            if (where.empty() || (lower_is_worse ? v < worst : v > worst)) { worst = v; where = at; }
          };
          note(judged_min_cos(r), w.min_cos, w.min_cos_at, true);
          note(judged_max_rel(r), w.max_rel, w.max_rel_at, false);
          note(r.metrics.at("min_cos"), w.raw_min_cos, w.raw_min_cos_at, true);
          note(r.metrics.at("max_rel"), w.raw_max_rel, w.raw_max_rel_at, false);
          note(judged_mismatch_fraction(r), w.mismatch, w.mismatch_at, false);
        }
        for (const StatisticRecord& st : r.systematic) w.systematic[st.name].note(st, fmt::format("{}, seed {}", c.id, seed));
      }
    if (!stopped) std::fprintf(stderr, "calibrate: %s done\n", k->id().c_str());
  }
  // A scheme judged by one set of thresholds keeps its plain key; one judged by several gets a row (and a JSON key)
  // per set, the thresholds in the key.
  std::map<std::string, int> sets_per_scheme;
  for (const auto& [key, w] : by)
    if (w.runs > 0) ++sets_per_scheme[key.first];
  std::printf("| kernel | scheme (weight/act) | runs | failed | worst min cos | threshold | worst max rel | threshold | margin (thr/worst) | worst mismatch frac | threshold |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  int failed = 0;
  nlohmann::ordered_json j;
  j["suite"] = suite.file;
  j["seeds"] = opt.seeds;
  j["harness_commit"] = harness_build_stamp();  // the tree this binary was built from
  // "" for a whole calibration; else the signal that stopped it: the rows hold the runs folded before it (never a
  // PASS). "runs_judged" of "runs_queued" runs were folded.
  const std::string interrupted = stop_signal_name();
  j["interrupted"] = interrupted;
  j["runs_queued"] = tickets.size();
  j["runs_judged"] = folded;
  std::vector<std::string> worst_lines;
  for (const auto& [key, w] : by) {
    if (w.runs == 0) continue;
    failed += w.failed;
    const double margin = w.max_rel > 0 ? w.th.max_rel / w.max_rel : INFINITY;
    const std::string row = sets_per_scheme[key.first] > 1 ? key.first + " (" + key.second + ")" : key.first;
    const auto bar = row.find(" | ");
    std::printf("| %s | %s | %d | %d | %.7f | %.5f | %.3e | %.3e | %.1fx | %.3e | %.3e |\n", row.substr(0, bar).c_str(),
                row.substr(bar + 3).c_str(), w.runs, w.failed, w.min_cos, w.th.min_cos, w.max_rel, w.th.max_rel, margin,
                w.mismatch, w.th.max_mismatch_fraction);
    j["schemes"][row] = {{"runs", w.runs}, {"failed", w.failed}, {"skipped", w.skipped}, {"worst_min_cos", w.min_cos},
                         {"worst_min_cos_at", w.min_cos_at}, {"threshold_min_cos", w.th.min_cos},
                         {"worst_max_rel", w.max_rel}, {"worst_max_rel_at", w.max_rel_at},
                         {"threshold_max_rel", w.th.max_rel}, {"worst_raw_min_cos", w.raw_min_cos},
                         {"worst_raw_min_cos_at", w.raw_min_cos_at}, {"worst_raw_max_rel", w.raw_max_rel},
                         {"worst_raw_max_rel_at", w.raw_max_rel_at}, {"worst_mismatch_fraction", w.mismatch},
                         {"worst_mismatch_fraction_at", w.mismatch_at},
                         {"threshold_mismatch_fraction", w.th.max_mismatch_fraction}, {"example_failure", w.example_failure}};
    if (!w.example_failure.empty()) std::printf("  FAILED on a clean kernel: %s\n", w.example_failure.c_str());
    std::string line = fmt::format("{}: worst max rel at {}; worst min cos at {}", row, w.max_rel_at, w.min_cos_at);
    if (w.raw_max_rel != w.max_rel || w.raw_min_cos != w.min_cos)  // a requantization band held on some run
      line += fmt::format("; with the band's tokens: max rel {:.3e} at {}, min cos {:.7f} at {}", w.raw_max_rel,
                          w.raw_max_rel_at, w.raw_min_cos, w.raw_min_cos_at);
    worst_lines.push_back(line);
  }
  std::printf("\n");
  for (const std::string& l : worst_lines) std::printf("%s\n", l.c_str());
  print_systematic(by, sets_per_scheme, j);
  if (!opt.json.empty()) write_file_atomically(opt.json, j.dump(1) + "\n");
  if (!interrupted.empty()) {
    std::printf("\ncalibrate: INTERRUPTED by %s: not a verdict (%d of %zu runs judged; %d clean failures among them; "
                "suite %s)\n", interrupted.c_str(), folded, tickets.size(), failed, suite.file.c_str());
    std::fflush(stdout);
    return exit_code_for_stop();
  }
  std::printf("\ncalibrate: %s (%d clean failures; suite %s, %d seeds)\n", failed ? "FAIL" : "PASS", failed,
              suite.file.c_str(), opt.seeds);
  return failed ? 1 : 0;
}

}  // namespace moe
