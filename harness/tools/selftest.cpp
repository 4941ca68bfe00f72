#include "harness/tools/selftest.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include <moe_harness/report.hpp>
#include <moe_harness/suite.hpp>

#include "fixtures/atomic_file.hpp"
#include "verdict/anchor_criteria.hpp"
#include "harness/isolation/executor.hpp"  // the clean kernel and the mutants run isolated, as `run` runs them
#include "harness/isolation/jobs.hpp"
#include "harness/isolation/stop_signal.hpp"
#include "harness/pipeline/token_probes.hpp"
#include "kernels/mutants/mutation.hpp"

namespace moe {
namespace {

struct Row {
  explicit Row(std::string n, bool exact = false) : name(std::move(n)), exact_only(exact) {}
  std::string name;
  bool exact_only = false;
  int live = 0, caught = 0;
  int below_tolerance = 0;  // exact-only mutants: live statistical cases missed, as expected
  int applies = 0, declined = 0;  // cases the mutant applies to; of those, the ones the kernel declines (skips)
  std::string declined_reason;
  int inside_envelope = 0;  // live statistical cases missed where the bug is inside a correct kernel's variation
  std::string envelope_reason;
  std::map<std::string, int> anchor_caught;
  std::map<std::string, int> checks;  // which of our checks caught it, and how often
  std::vector<std::string> missed;    // live cases our criterion passed
};

struct Outcome {
  CaseRecord rec;
  std::vector<float> ref, out;
};

// The kernels by report id (harness/run/kernel_registry.hpp): the clean kernel, the baseline a mutant's output is
// compared with to tell whether the bug changed anything (for the GPU the mutant build without a bug: the default
// build runs some cases on kernels the mutant build does not have, whose summation order differs), then a mutant.
std::string kernel_base(const std::string& kind) {
  if (kind == "host") return "host-contract";
  if (kind == "gpu") return "gpu-fused-moe";
  throw_bad_input("command line", "--kernel", "unknown selftest kernel '" + kind + "'", "use host or gpu");
}
std::string liveness_baseline_id(const std::string& kind) {
  return kind == "gpu" ? "gpu-fused-moe~none" : kernel_base(kind);
}
std::string mutant_id(const std::string& kind, Mutation m) { return kernel_base(kind) + "~" + std::string(mutation_name(m)); }

constexpr std::size_t kClean = 0, kBaseline = 1;  // kernel indexes; the mutants follow in catalog order

// Runs are queued first and collected in the same order (several workers judge the queue at once, --jobs), so
// the table is the same for any number of workers.
CaseExecutor::Ticket queue_one(CaseExecutor& exec, std::size_t case_index, std::size_t kernel,
                               std::optional<std::uint64_t> seed, bool corrupt_pristine = false) {
  return exec.submit({.case_index = case_index, .kernel_index = kernel, .seed = seed, .capture = true,
                      .corrupt_pristine = corrupt_pristine});
}

// A stop signal (SIGINT, SIGTERM): the runs not judged are dropped and the tables end where the folding stopped.
struct Interrupted {};

Outcome collect(CaseExecutor& exec, CaseExecutor::Ticket t) {
  std::optional<CaseResult> res = exec.wait(t);
  if (!res) throw Interrupted{};
  return {std::move(res->record), std::move(res->ref), std::move(res->out)};
}

// Tag `large`: buffers past 2^32 elements, seconds of weight generation per run (cases/selftest-gpu.yaml).
bool is_large(const CaseSpec& c) { return std::find(c.tags.begin(), c.tags.end(), "large") != c.tags.end(); }

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Whether the run's record says the token probe that fails with `check` ran.
bool probe_ran(const CaseRecord& r, Check check) {
  const char* name = token_probe_name(check);
  for (const auto& [n, st] : r.probes)
    if (name && n == name) return st == kProbeRan;
  return false;
}

// Runs the clean kernel, the liveness baseline (GPU) and mutant m through the steps of cases/selftest-sequence.yaml,
// each on its own kernel object in one worker, in step order. The clean kernel's steps count as clean runs (a
// failed one is a false alarm); a mutant's step is live where its judged output differs from the baseline's same
// step, or where it fails while the baseline passed (the bug showed in a later call of the step, e.g. its rerun).
constexpr const char* kSelftestSequence = "selftest-sequence";

Row run_sequence_mutant(const SelftestOptions& opt, Mutation m, const std::vector<AnchorCriterion>& anchors,
                        int& clean_runs, int& clean_failures, std::map<std::string, int>& anchor_false_alarms,
                        std::vector<std::string>& clean_failed) {
  ExecConfig config;
  config.suite_files = {api::resolve_suite(kSelftestSequence).string()};
  const bool gpu = opt.kernel == "gpu";
  config.kernel_ids = {kernel_base(opt.kernel), liveness_baseline_id(opt.kernel), mutant_id(opt.kernel, m)};
  config.timing = false;
  config.device.required = gpu;
  CaseExecutor exec(config, {opt.isolation, opt.case_timeout_s, 1, threads_per_job(opt.jobs, opt.job_threads)});
  exec.set_hold_back([] { return stop_requested(); });
  const std::vector<CaseSpec>& steps = exec.cases();
  std::vector<CaseExecutor::Ticket> t[3];
  for (std::size_t k = 0; k < 3; ++k)
    if (k != 1 || gpu)  // the host kernel is its own liveness baseline
      for (std::size_t ci = 0; ci < steps.size(); ++ci) t[k].push_back(queue_one(exec, ci, k, std::nullopt));
  Row row{std::string(mutation_name(m))};
  std::vector<Outcome> clean;
  for (std::size_t ci = 0; ci < steps.size(); ++ci) {
    clean.push_back(collect(exec, t[0][ci]));
    const Outcome& o = clean.back();
    if (o.rec.status == Status::skip) continue;
    ++clean_runs;
    if (o.rec.status != Status::pass) {
      ++clean_failures;
      clean_failed.push_back(fmt::format("{} (call sequence {}): {}", steps[ci].id, kSelftestSequence, o.rec.reason));
    }
    for (const auto& a : anchors)
      if (!o.ref.empty() && a.fails(o.ref, o.out, steps[ci].problem.tokens, steps[ci].problem.hidden)) ++anchor_false_alarms[a.name];
  }
  for (std::size_t ci = 0; ci < steps.size(); ++ci) {
    const CaseSpec& c = steps[ci];
    const Outcome good = gpu ? collect(exec, t[1][ci]) : clean[ci];
    const Outcome bad = collect(exec, t[2][ci]);
    ++row.applies;
    if (bad.rec.status == Status::skip) {
      ++row.declined;
      row.declined_reason = bad.rec.reason;
      continue;
    }
    const bool live = bad.rec.status == Status::error || !bitwise_equal(good.out, bad.out) ||
                      (bad.rec.status != Status::pass && good.rec.status == Status::pass);
    if (!live) continue;
    ++row.live;
    if (bad.rec.status != Status::pass) {
      ++row.caught;
      ++row.checks[to_string(bad.rec.failed_check)];
    } else {
      row.missed.push_back(c.id + " (call sequence " + kSelftestSequence + ")");
    }
    for (const auto& a : anchors)
      if (!bad.ref.empty() && a.fails(bad.ref, bad.out, c.problem.tokens, c.problem.hidden)) ++row.anchor_caught[a.name];
  }
  return row;
}

}  // namespace

int run_selftest(const SelftestOptions& opt) {
  std::vector<std::string> suite_names = opt.suites;
  if (suite_names.empty()) suite_names = opt.kernel == "gpu" ? std::vector<std::string>{"selftest", "selftest-gpu"}
                                                             : std::vector<std::string>{"selftest"};
  ExecConfig config;
  for (const auto& n : suite_names) config.suite_files.push_back(api::resolve_suite(n).string());
#ifndef MOE_HAVE_GPU_RUNTIME
  if (opt.kernel == "gpu")
    throw_bad_input("command line", "--kernel", "this build has no GPU kernels",
                    "configure with `cmake --preset cuda` or `--preset hip` to build them");
#endif
  std::vector<Mutation> mutants;  // those this kernel has, in catalog order (kernel index kBaseline + 1 + i)
  config.kernel_ids = {kernel_base(opt.kernel), liveness_baseline_id(opt.kernel)};
  for (Mutation m : all_mutations())
    if ((!gpu_only(m) || opt.kernel == "gpu") && (!host_only(m) || opt.kernel == "host")) {
      mutants.push_back(m);
      config.kernel_ids.push_back(mutant_id(opt.kernel, m));
    }
  config.timing = false;  // verdicts only
  config.device.required = opt.kernel == "gpu";  // no GPU: every case fails, never a skip
  const StopSignals stop("stopping: the runs in flight get 2 s to end, then the partial table is written");
  CaseExecutor exec(config, {opt.isolation, opt.case_timeout_s, opt.jobs, threads_per_job(opt.jobs, opt.job_threads)});
  exec.set_hold_back([] { return stop_requested(); });
  const std::vector<CaseSpec>& cases = exec.cases();
  const auto& anchors = anchor_criteria();
  KernelUnderTest& clean = *exec.kernels()[kClean];
  if (opt.kernel == "gpu") {
    const DeviceDetection& device = exec.device();
    if (!device.device) {
      std::fprintf(stderr, "selftest --kernel gpu: no usable GPU (%s)\n", device.message.c_str());
      return 1;
    }
    std::printf("selftest on %s (%s), kernel %s\n", device.device->name.c_str(), device.device->arch.c_str(),
                clean.id().c_str());
  }

  // 1. The clean kernel over N seeds: our verdict must pass every time; count each anchor's false alarms.
  int clean_runs = 0, clean_failures = 0;
  std::map<std::string, int> anchor_false_alarms;
  std::vector<std::string> clean_failed;
  std::map<std::string, std::string> clean_declined;  // case id -> the kernel's reason; neither a run nor a false alarm
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::vector<Row> rows;
  std::vector<std::string> not_applicable;
  std::vector<std::string> host_hooks_only;
  for (Mutation m : all_mutations()) {
    if (gpu_only(m) && opt.kernel != "gpu") not_applicable.push_back(std::string(mutation_name(m)));
    if (host_only(m) && opt.kernel != "host") host_hooks_only.push_back(std::string(mutation_name(m)));
  }
  std::string interrupted;  // the stop signal's name when one ended the folding early
  try {
    // A large case (tag `large`: buffers past 2^32 elements) runs its own seed once: generating its 3.6 GB of
    // weights takes ~45 s a seed on the H200 machine (measured 2026-11-30), and its per-token statistics are those of
    // the nightly MXFP4 cases, calibrated over 20 seeds on the GPU.
    std::vector<CaseExecutor::Ticket> clean_tickets;
    for (int seed = 0; seed < opt.seeds && !stop_requested(); ++seed)
      for (std::size_t ci = 0; ci < cases.size(); ++ci)
        if (!is_large(cases[ci]) || seed == 0)
          clean_tickets.push_back(
              queue_one(exec, ci, kClean, is_large(cases[ci]) ? std::nullopt : std::optional<std::uint64_t>(seed + 1)));
    std::size_t next = 0;
    for (int seed = 0; seed < opt.seeds; ++seed) {
      std::fprintf(stderr, "selftest: clean kernel, seed %d/%d (%.0f s)\n", seed + 1, opt.seeds, elapsed());
      for (std::size_t ci = 0; ci < cases.size(); ++ci) {
        const CaseSpec& c = cases[ci];
        if (is_large(c) && seed > 0) continue;
        if (next >= clean_tickets.size()) throw Interrupted{};  // a signal cut the queuing short
        const Outcome o = collect(exec, clean_tickets[next++]);
        if (o.rec.status == Status::skip) {  // the kernel declines the case (Support::no): nothing was judged
          clean_declined.emplace(c.id, o.rec.reason);
          continue;
        }
        ++clean_runs;
        if (o.rec.status != Status::pass) {
          ++clean_failures;
          clean_failed.push_back(fmt::format("{} seed {}: {}", c.id, seed + 1, o.rec.reason));
        }
        for (const auto& a : anchors)
          if (!o.ref.empty() && a.fails(o.ref, o.out, c.problem.tokens, c.problem.hidden)) ++anchor_false_alarms[a.name];
      }
    }

    // 2. Every mutant on the cases where it applies; live = its output differs from the bug-free same build's. A
    // deterministic build's bug-free output of a case is the same for every mutant: it is computed once per case.
    KernelUnderTest& baseline = *exec.kernels()[kBaseline];
    std::map<std::size_t, Outcome> good_outcomes;
    // Per mutant, its runs and the bug-free runs it needs are queued first: (case, bug-free ticket if queued, its own).
    struct Queued {
      std::size_t ci;
      std::optional<CaseExecutor::Ticket> good;
      CaseExecutor::Ticket bad;
    };
    auto good_outcome = [&](const Queued& q) -> Outcome {
      if (!baseline.deterministic(cases[q.ci].problem)) return collect(exec, *q.good);
      auto it = good_outcomes.find(q.ci);
      if (it == good_outcomes.end()) it = good_outcomes.emplace(q.ci, collect(exec, *q.good)).first;
      return it->second;
    };
    for (std::size_t mi = 0; mi < mutants.size(); ++mi) {
      const Mutation m = mutants[mi];
      if (sequence_only(m)) continue;  // run through the call sequence below
      std::fprintf(stderr, "selftest: mutant %s (%.0f s)\n", std::string(mutation_name(m)).c_str(), elapsed());
      Row row{std::string(mutation_name(m)), exact_tier_only(m, opt.kernel == "gpu")};
      std::vector<Queued> queued;
      for (std::size_t ci = 0; ci < cases.size(); ++ci) {
        const CaseSpec& c = cases[ci];
        if (!mutation_applies(m, c.problem)) continue;
        // A probe's mutant on the exact tier: every output bit is judged in the main run already (and an exact
        // sum hides an accumulator's width), so the probe is not what would catch it there.
        if (probe_check(m) && c.tier == Tier::exact) continue;
        // Cases tagged large (buffers past 2^32 elements, seconds per run) exist for the GPU-only offset bug; every
        // other mutant is judged on the small cases.
        if (!gpu_only(m) && is_large(c)) continue;
        Queued q{ci, std::nullopt, 0};
        if (!baseline.deterministic(c.problem) || !good_outcomes.count(ci)) q.good = queue_one(exec, ci, kBaseline, std::nullopt);
        q.bad = queue_one(exec, ci, kBaseline + 1 + mi, std::nullopt);
        queued.push_back(q);
      }
      for (const Queued& q : queued) {
        const CaseSpec& c = cases[q.ci];
        const Outcome good = good_outcome(q);
        const Outcome bad = collect(exec, q.bad);
        ++row.applies;
        if (bad.rec.status == Status::skip) {  // the kernel declines the case: no bug of it can show there
          ++row.declined;
          row.declined_reason = bad.rec.reason;
          continue;
        }
        // A probe's mutant may leave the judged output exact (it reads or writes only what a probe places there):
        // it is live where its probe ran on the mutant's run, or where another check failed that run first; its own
        // probe must be among the checks that caught it (below).
        const std::optional<Check> by = probe_check(m);
        const bool live = by ? bad.rec.status != Status::pass || probe_ran(bad.rec, *by)
                             : bad.rec.status == Status::error || !bitwise_equal(good.out, bad.out);
        if (!live) continue;
        ++row.live;
        if (bad.rec.status != Status::pass) {
          ++row.caught;
          ++row.checks[to_string(bad.rec.failed_check)];
        } else if (row.exact_only && c.tier == Tier::statistical) {
          ++row.below_tolerance;  // counted live, reported, not a failure: the exact tier is where it must be caught
        } else if (const std::string_view why = inside_legitimate_envelope(m, c.problem);
                   !why.empty() && c.tier == Tier::statistical) {
          ++row.inside_envelope;  // reported with its reason, not a failure
          row.envelope_reason = std::string(why);
        } else {
          row.missed.push_back(c.id);
        }
        for (const auto& a : anchors)
          if (!bad.ref.empty() && a.fails(bad.ref, bad.out, c.problem.tokens, c.problem.hidden)) ++row.anchor_caught[a.name];
      }
      // A probe's mutant that some other check always caught first proves nothing about its probe.
      if (const std::optional<Check> by = probe_check(m); by && row.live > 0 && !row.checks.count(to_string(*by)))
        row.missed.push_back("every live case (its probe " + to_string(*by) + " never caught it: another check did first)");
      rows.push_back(std::move(row));
    }
    // 2b. The mutants live only across calls of different sizes, through a call sequence on one kernel object each.
    for (Mutation m : mutants)
      if (sequence_only(m)) {
        std::fprintf(stderr, "selftest: mutant %s through the call sequence %s (%.0f s)\n",
                     std::string(mutation_name(m)).c_str(), kSelftestSequence, elapsed());
        rows.push_back(run_sequence_mutant(opt, m, anchors, clean_runs, clean_failures, anchor_false_alarms, clean_failed));
      }
    // 3. A kernel writing into the pristine checkpoint (the reference's inputs): must be a harness error.
    {
      Row row{"converter_writes_pristine"};
      std::vector<CaseExecutor::Ticket> corrupt;
      for (std::size_t ci = 0; ci < cases.size(); ++ci)
        corrupt.push_back(queue_one(exec, ci, kClean, std::nullopt, /*corrupt_pristine=*/true));
      for (std::size_t ci = 0; ci < cases.size(); ++ci) {
        const CaseSpec& c = cases[ci];
        const Outcome o = collect(exec, corrupt[ci]);
        ++row.applies;
        if (o.rec.status == Status::skip) {  // declined before the kernel (and its converter) ever ran
          ++row.declined;
          row.declined_reason = o.rec.reason;
          continue;
        }
        ++row.live;
        if (o.rec.status == Status::error && o.rec.reason.find("mutated") != std::string::npos) {
          ++row.caught;
          ++row.checks["harness_error"];
        } else {
          row.missed.push_back(c.id);
        }
        // The anchors compare outputs only: the output is correct here, so none of them can notice.
      }
      rows.push_back(std::move(row));
    }
  } catch (const Interrupted&) {
  }
  interrupted = stop_signal_name();  // also a signal after the last run: the exit says it arrived

  // Table.
  std::string head = fmt::format("{:<32} {:>9}", "mutant (live cases)", "ours");
  for (const auto& a : anchors) head += fmt::format(" {:>14}", a.name);
  std::printf("%s\n", head.c_str());
  bool all_caught = true;
  for (const Row& r : rows) {
    std::string line = fmt::format("{:<32} {:>9}", fmt::format("{} ({})", r.name, r.live),
                                   r.live                                           ? fmt::format("{}/{}", r.caught, r.live)
                                   : r.applies > 0 && r.declined == r.applies ? std::string("declined")
                                                                              : std::string("not live"));
    for (const auto& a : anchors) {
      const auto it = r.anchor_caught.find(a.name);
      line += fmt::format(" {:>14}", r.name == "converter_writes_pristine" ? "blind"
                                                                           : fmt::format("{}/{}", it == r.anchor_caught.end() ? 0 : it->second, r.live));
    }
    std::string by;
    for (const auto& [k, v] : r.checks) by += (by.empty() ? "" : ", ") + k + " " + std::to_string(v);
    std::printf("%s   caught by: %s%s%s\n", line.c_str(), by.c_str(),
                r.below_tolerance ? fmt::format(" (exact-tier bug: {} statistical case(s) below tolerance)", r.below_tolerance).c_str() : "",
                r.inside_envelope ? fmt::format(" ({} statistical case(s) inside the legitimate envelope: {})", r.inside_envelope,
                                                r.envelope_reason).c_str() : "");
    // Not reached: the kernel declines every case the mutant applies to (it has no such feature to break).
    const bool not_reached = r.live == 0 && r.applies > 0 && r.declined == r.applies;
    if ((r.live == 0 && !not_reached) || !r.missed.empty()) all_caught = false;
  }
  if (!interrupted.empty()) all_caught = false;
  std::string fa = fmt::format("{:<32} {:>9}", fmt::format("clean false alarms ({})", clean_runs),
                               fmt::format("{}/{}", clean_failures, clean_runs));
  for (const auto& a : anchors) fa += fmt::format(" {:>14}", fmt::format("{}/{}", anchor_false_alarms[a.name], clean_runs));
  std::printf("%s\n", fa.c_str());
  for (const auto& a : anchors) std::printf("  %-14s %s\n", a.name.c_str(), a.source.c_str());
  for (const auto& n : not_applicable) std::printf("  %s: a GPU-only bug (the %s kernel has no such code)\n", n.c_str(), opt.kernel.c_str());
  for (const auto& n : host_hooks_only)
    std::printf("  %s: a host-only bug (written into the host kernel's hook points; the %s kernels carry no such code)\n",
                n.c_str(), opt.kernel.c_str());
  for (const Row& r : rows)
    if (r.live == 0 && r.applies > 0 && r.declined == r.applies)
      std::printf("  %s: not reached (the %s kernel declines every case it applies to: %s)\n", r.name.c_str(),
                  opt.kernel.c_str(), r.declined_reason.c_str());
  for (const auto& [id, why] : clean_declined) std::printf("  declined by the kernel: %s (%s)\n", id.c_str(), why.c_str());
  for (const Row& r : rows)
    for (const auto& m : r.missed) std::printf("MISSED: %s on %s\n", r.name.c_str(), m.c_str());
  for (const auto& f : clean_failed) std::printf("FALSE ALARM: %s\n", f.c_str());

  if (!opt.json.empty()) {
    nlohmann::ordered_json j;
    j["kernel"] = clean.id();
    j["harness_commit"] = api::build_stamp();  // the tree this binary was built from
    j["suites"] = suite_names;
    if (opt.kernel == "gpu") j["device"] = exec.device().device->name + " (" + exec.device().device->arch + ")";
    j["seeds"] = opt.seeds;
    // "" for a whole selftest; else the signal that stopped it: the counts below are of the runs judged before it,
    // the mutants not reached are absent (never a PASS).
    j["interrupted"] = interrupted;
    j["clean_runs"] = clean_runs;
    j["clean_failures"] = clean_failures;
    j["clean_declined"] = clean_declined;
    j["anchor_false_alarms"] = anchor_false_alarms;
    for (const Row& r : rows)
      j["mutants"][r.name] = {{"live", r.live}, {"caught", r.caught}, {"checks", r.checks}, {"exact_tier_only", r.exact_only},
                              {"below_tolerance_statistical", r.below_tolerance},
                              {"applies", r.applies}, {"declined", r.declined},
                              {"inside_envelope_statistical", r.inside_envelope},
                              {"anchors", r.anchor_caught}, {"missed", r.missed}};
    write_file_atomically(opt.json, j.dump(1) + "\n");
  }
  // A selftest whose kernel declined every case judged nothing: never a PASS.
  const bool ok = all_caught && clean_failures == 0 && clean_runs > 0;
  if (!interrupted.empty()) {
    std::printf("\nselftest: INTERRUPTED by %s: not a verdict (%zu of %zu mutant rows and %d clean runs judged, %.0f s)"
                "\n", interrupted.c_str(), rows.size(), mutants.size() + 1, clean_runs, elapsed());
    std::fflush(stdout);
    return exit_code_for_stop();
  }
  std::printf("\nselftest: %s (%zu mutants, %d clean runs over %d seeds, %.0f s)\n", ok ? "PASS" : "FAIL", rows.size(),
              clean_runs, opt.seeds, elapsed());
  return ok ? 0 : 1;
}

}  // namespace moe
