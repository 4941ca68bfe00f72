#include "harness/runner.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <memory>

#include "fixtures/error.hpp"
#include "harness/case_loader.hpp"
#include "harness/case_pipeline.hpp"
#include "harness/kernel_registry.hpp"
#include "kernels/plugin/plugin_kernel.hpp"
#include "fixtures/atomic_file.hpp"
#include "reports/html_report.hpp"
#include "reports/run_report.hpp"

#include "moe_build_stamp.hpp"  // MOE_BUILD_COMMIT, written at every build (cmake/build_stamp.cmake)

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

std::string harness_build_stamp() { return MOE_BUILD_COMMIT; }

namespace {

struct RunState {
  std::vector<CaseRecord> records;
  std::vector<bool> ran;
  std::size_t done = 0, total = 0;
};

class CaseTest : public testing::Test {
 public:
  CaseTest(const CaseSpec* c, KernelUnderTest* k, const DeviceDetection* d, const PipelineOptions* o, RunState* s,
           std::size_t slot)
      : case_(c), kernel_(k), device_(d), opt_(o), state_(s), slot_(slot) {}
  void TestBody() override {
    const auto t0 = std::chrono::steady_clock::now();
    CaseRecord r = execute_case(*case_, *kernel_, *device_, *opt_);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++state_->done;
    // GoogleTest applies --gtest_filter and sharding inside RUN_ALL_TESTS: the count is known only from here on.
    if (state_->total == 0) state_->total = std::size_t(std::max(0, testing::UnitTest::GetInstance()->test_to_run_count()));
    std::fprintf(stderr, "[%zu/%zu] %-5s %s %s (%.2f s)%s%s\n", state_->done, state_->total, r.status.c_str(),
                 r.kernel.c_str(), r.id.c_str(), sec, r.reason.empty() ? "" : ": ", r.reason.c_str());
    for (const auto& [k, v] : r.metrics) RecordProperty(k, fmt::format("{:.9g}", v));
    RecordProperty("variant", r.variant);
    RecordProperty("verdict", r.status);  // "status" is reserved by GoogleTest
    state_->records[slot_] = r;
    state_->ran[slot_] = true;
    if (r.status == "skip") GTEST_SKIP() << r.reason;
    if (r.status == "fail") ADD_FAILURE() << "FAIL " << r.reason << "\n" << r.details;
    if (r.status == "error") ADD_FAILURE() << "HARNESS ERROR (not a kernel verdict): " << r.reason;
  }

 private:
  const CaseSpec* case_;
  KernelUnderTest* kernel_;
  const DeviceDetection* device_;
  const PipelineOptions* opt_;
  RunState* state_;
  std::size_t slot_;
};

}  // namespace

int run_suite(const RunOptions& opt) {
  const Suite suite = load_suite_file(resolve_suite(opt.suite));
  std::vector<const CaseSpec*> cases;
  for (const CaseSpec& c : suite.cases)
    if (case_selected(opt.filters, c.id)) cases.push_back(&c);
  std::vector<std::shared_ptr<KernelUnderTest>> kernels, extra = opt.extra_kernels;
  for (const std::string& path : opt.plugins) extra.push_back(std::make_shared<PluginKernel>(path));
  if (!opt.kernels.empty() || extra.empty())
    for (auto& k : make_kernels(opt.kernels, opt.host_budget, opt.dispatch)) kernels.push_back(std::move(k));
  kernels.insert(kernels.end(), extra.begin(), extra.end());
  for (auto& k : kernels) k->set_timing(opt.timing);
  const DeviceDetection device = detect_device();

  const std::filesystem::path dir = opt.report_dir.empty()
                                        ? std::filesystem::path("reports-out") / utc_now_iso8601()
                                        : opt.report_dir;
  std::filesystem::create_directories(dir);
  const std::filesystem::path junit = opt.junit.empty() ? dir / "junit.xml" : opt.junit;
  const std::filesystem::path json = opt.json.empty() ? dir / "report.json" : opt.json;

  std::vector<std::string> args = {"moe-harness"};
  args.insert(args.end(), opt.gtest_args.begin(), opt.gtest_args.end());
  args.push_back("--gtest_output=xml:" + junit.string());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = int(argv.size());
  testing::InitGoogleTest(&argc, argv.data());

  WeightCache weight_cache(std::size_t(6) << 30, opt.reference_cache);
  std::optional<ReferenceCache> reference_cache;
  if (!opt.reference_cache.empty()) reference_cache.emplace(opt.reference_cache);
  PipelineOptions popt;
  popt.device_requirement = opt.device;
  popt.seed = opt.seed;
  popt.weights = &weight_cache;
  popt.references = reference_cache ? &*reference_cache : nullptr;
  RunState state;
  state.records.resize(cases.size() * kernels.size());
  state.ran.assign(state.records.size(), false);
  std::size_t slot = 0;
  for (auto& k : kernels)
    for (const CaseSpec* c : cases) {
      const std::size_t s = slot++;
      KernelUnderTest* kp = k.get();
      const auto colon = c->source.rfind(':');
      const int line = colon == std::string::npos ? 0 : std::atoi(c->source.c_str() + colon + 1);
      testing::RegisterTest(kp->id().c_str(), c->id.c_str(), nullptr, nullptr, suite.file.c_str(), line,
                            [c, kp, &device, &popt, &state, s]() -> testing::Test* {
                              return new CaseTest(c, kp, &device, &popt, &state, s);
                            });
    }

  RunReport report;
  Provenance& p = report.provenance;
  p.harness_version = kHarnessVersion;
  p.harness_commit = harness_build_stamp();
  for (auto& k : kernels) p.kernels.push_back({k->id(), k->version()});
  if (device.device) {
    p.device_name = device.device->name; p.device_vendor = device.device->vendor; p.device_arch = device.device->arch;
    p.compute_units = device.device->compute_units; p.driver_version = device.device->driver_version;
    p.runtime_version = device.device->runtime_version;
  }
  p.device_message = device.message;
  p.suite = suite.name; p.suite_file = suite.file; p.suite_hash = suite.file_hash;
  p.seed = opt.seed ? std::to_string(*opt.seed) : "case";
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  p.host = host;
  p.start_time = utc_now_iso8601();

  const int gtest_rc = RUN_ALL_TESTS();
  p.end_time = utc_now_iso8601();
  for (std::size_t i = 0; i < state.records.size(); ++i)
    if (state.ran[i]) report.cases.push_back(state.records[i]);
  write_reports(report, json, dir / "summary.md");
  write_file_atomically(dir / "report.html", to_html(read_report(json)));

  const int pass = report.count("pass"), fail = report.count("fail"), skip = report.count("skip"),
            err = report.count("error");
  std::printf("\n%s", to_markdown(report).c_str());
  // The note matters when GPU kernels were asked for, or the default set was (a CPU-only build has none to run).
  bool device_kernels = opt.kernels.empty() && opt.extra_kernels.empty() && opt.plugins.empty();
  for (auto& k : kernels) device_kernels |= k->needs_device();
  if (!device.device && device_kernels)
    std::printf("\nNOTE: no GPU here (%s): GPU kernels did not run; %d case(s) skipped in all.\n",
                device.message.c_str(), skip);
  std::printf("\nmoe-harness: %d passed, %d failed, %d skipped, %d errors; report directory: %s\n", pass, fail, skip,
              err, dir.string().c_str());
  if (reference_cache)
    std::printf("reference cache %s: references %zu hit(s), %zu computed; expert weights %zu loaded, %zu generated "
                "(reference version %.12s)\n",
                reference_cache->dir().string().c_str(), reference_cache->hits(), reference_cache->misses(),
                weight_cache.disk_hits(), weight_cache.misses() - weight_cache.disk_hits(), reference_version().c_str());
  if (err > 0) return int(ExitCode::harness_error);
  if (fail > 0 || gtest_rc != 0) return int(ExitCode::case_failed);
  return 0;
}

}  // namespace moe
