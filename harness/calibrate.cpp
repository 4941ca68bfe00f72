#include "harness/calibrate.hpp"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

#include "fixtures/atomic_file.hpp"
#include "harness/case_loader.hpp"
#include "harness/case_pipeline.hpp"
#include "harness/kernel_registry.hpp"
#include "harness/runner.hpp"
#include "harness/thresholds.hpp"

namespace moe {
namespace {
struct Worst {
  int runs = 0, failed = 0, skipped = 0;
  double min_cos = 1.0, max_rel = 0.0, mismatch = 0.0;
  Thresholds th;
  std::string example_failure;
};
}  // namespace

int run_calibration(const CalibrateOptions& opt) {
  const Suite suite = load_suite_file(resolve_suite(opt.suite));
  auto kernels = make_kernels(opt.kernels.empty() ? std::vector<std::string>{"host"} : opt.kernels, 0);
  const DeviceDetection device = detect_device();
  WeightCache cache;
  std::map<std::string, Worst> by;  // key: kernel | weight/act scheme
  // Seed-major: the cases of one seed share generated weights (the cache), so each weight set is made once per seed.
  for (auto& k : kernels) {
    k->set_timing(false);  // verdict metrics only; speed is the bench suite's business
    for (int seed = 1; seed <= opt.seeds; ++seed)
      for (const CaseSpec& c : suite.cases) {
        if (!case_selected(opt.filters, c.id) || c.tier == Tier::exact) continue;
        const std::string key = k->id() + " | " + std::string(name(c.problem.quant.weight)) + "/" +
                                std::string(name(c.problem.quant.act));
        Worst& w = by[key];
        w.th = default_thresholds(c.problem, c.tier);
        PipelineOptions po;
        po.seed = std::uint64_t(seed);
        po.weights = &cache;
        po.rerun_probe = false;
        const CaseRecord r = execute_case(c, *k, device, po);
        if (r.status == "skip") { ++w.skipped; continue; }
        ++w.runs;
        if (r.status != "pass") {
          ++w.failed;
          if (w.example_failure.empty()) w.example_failure = fmt::format("{} seed {}: {}", c.id, seed, r.reason);
        }
        if (r.metrics.count("min_cos")) {
          w.min_cos = std::min(w.min_cos, r.metrics.at("min_cos"));
          w.max_rel = std::max(w.max_rel, r.metrics.at("max_rel"));
          w.mismatch = std::max(w.mismatch, r.metrics.at("mismatch_fraction"));
        }
      }
    std::fprintf(stderr, "calibrate: %s done\n", k->id().c_str());
  }
  std::printf("| kernel | scheme (weight/act) | runs | failed | worst min cos | threshold | worst max rel | threshold | margin (thr/worst) | worst mismatch frac | threshold |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  int failed = 0;
  nlohmann::ordered_json j;
  j["suite"] = suite.file;
  j["seeds"] = opt.seeds;
  for (const auto& [key, w] : by) {
    if (w.runs == 0) continue;
    failed += w.failed;
    const double margin = w.max_rel > 0 ? w.th.max_rel / w.max_rel : INFINITY;
    const auto bar = key.find(" | ");
    std::printf("| %s | %s | %d | %d | %.7f | %.5f | %.3e | %.3e | %.1fx | %.3e | %.3e |\n", key.substr(0, bar).c_str(),
                key.substr(bar + 3).c_str(), w.runs, w.failed, w.min_cos, w.th.min_cos, w.max_rel, w.th.max_rel, margin,
                w.mismatch, w.th.max_mismatch_fraction);
    j["schemes"][key] = {{"runs", w.runs}, {"failed", w.failed}, {"skipped", w.skipped}, {"worst_min_cos", w.min_cos},
                         {"threshold_min_cos", w.th.min_cos}, {"worst_max_rel", w.max_rel},
                         {"threshold_max_rel", w.th.max_rel}, {"worst_mismatch_fraction", w.mismatch},
                         {"threshold_mismatch_fraction", w.th.max_mismatch_fraction}, {"example_failure", w.example_failure}};
    if (!w.example_failure.empty()) std::printf("  FAILED on a clean kernel: %s\n", w.example_failure.c_str());
  }
  if (!opt.json.empty()) write_file_atomically(opt.json, j.dump(1) + "\n");
  std::printf("\ncalibrate: %s (%d clean failures; suite %s, %d seeds)\n", failed ? "FAIL" : "PASS", failed,
              suite.file.c_str(), opt.seeds);
  return failed ? 1 : 0;
}

}  // namespace moe
