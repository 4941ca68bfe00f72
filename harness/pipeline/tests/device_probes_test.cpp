// The device probes' host side (harness/pipeline/device_probes.hpp): the probes' row comparison (rows_apart_from,
// probes.hpp) against hand-made outputs,
// on the host kernel both probes reported as not run, with the reason, never as passed; and the probes' bookkeeping
// on a kernel that drives its device work itself (DrivenDeviceProbes, a Python kernel's way) through a fake driver
// whose defects are the ones the probes exist for.
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures/tensor_element.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/pipeline/device_probes.hpp"
#include "kernels/host/host_contract_kernel.hpp"

namespace moe {
namespace {

Tensor rows(std::vector<float> v, std::int64_t t) {
  Tensor x("x", DType::f32, {t, std::int64_t(v.size()) / t});
  for (std::size_t i = 0; i < v.size(); ++i) store_element(x, std::int64_t(i), v[i]);
  return x;
}

TEST(DeviceProbes, ExactComparisonFollowsTheSourceRows) {
  const Tensor expected = rows({1, 2, 3, 4, 5, 6}, 3);
  const Tensor rotated = rows({3, 4, 5, 6, 1, 2}, 3);  // row i is expected's row (i + 1) % 3
  std::int64_t first = 7;
  EXPECT_EQ(rows_apart_from(rotated, expected, {1, 2, 0}, true, first), 0);
  EXPECT_EQ(first, -1);
  // Against the identity, every row differs; the first is row 0.
  EXPECT_EQ(rows_apart_from(rotated, expected, {0, 1, 2}, true, first), 3);
  EXPECT_EQ(first, 0);
}

TEST(DeviceProbes, NondeterministicComparisonAllowsOnePercentOfTheRowNorm) {
  // Row norm of (3, 4) is 5: a change of 0.04 in one element is 0.8 % of it (kept), 0.06 is 1.2 % (apart).
  const Tensor expected = rows({3, 4, 0, 1}, 2);
  std::int64_t first = -1;
  EXPECT_EQ(rows_apart_from(rows({3.04f, 4, 0, 1}, 2), expected, {0, 1}, false, first), 0);
  double worst = -1;
  EXPECT_EQ(rows_apart_from(rows({3.06f, 4, 0, 1}, 2), expected, {0, 1}, false, first, &worst), 1);
  EXPECT_EQ(first, 0);
  EXPECT_NEAR(worst, 0.06 / 5, 1e-6);  // |3.06 - 3| / |(3, 4)|; row 1 equal
  // A NaN where the judged run is finite (an unwritten sentinel) is apart however small the rest.
  EXPECT_EQ(rows_apart_from(rows({3, 4, NAN, 1}, 2), expected, {0, 1}, false, first), 1);
  EXPECT_EQ(first, 1);
  // And bit equality is stricter: the 0.8 % change is apart there.
  EXPECT_EQ(rows_apart_from(rows({3.04f, 4, 0, 1}, 2), expected, {0, 1}, true, first), 1);
}

TEST(DeviceProbes, HostKernelSaysNotRunWithTheReason) {
  const Suite s = load_suite_text("suite: t\ndefaults: {hidden: 64, inter: 64, experts: 4, topk: 2}\ncases:\n"
                                  "  - {tokens: 3}\n", "t.yaml");
  HostContractKernel k;
  const CaseRecord r = execute_case(s.cases[0], k, detect_device(), PipelineOptions{});
  ASSERT_EQ(r.status, Status::pass) << r.reason;
  int seen = 0;
  for (const auto& [name, st] : r.probes)
    if (name == "stream_order" || name == "graph_replay") {
      ++seen;
      EXPECT_EQ(st, "not run: a host kernel: no device work to drive") << name;
    }
  EXPECT_EQ(seen, 2);
}

// A kernel whose output row i is x row i times the sum of token i's router weights, driven by a fake device: `bug`
// picks the defect its device runs have. The judged output is that function of the case's own inputs.
enum class FakeBug { none, default_stream, baked_at_capture, unavailable, declined, capture_refused };

class DrivenFake final : public KernelUnderTest, public DrivenDeviceProbes {
 public:
  explicit DrivenFake(FakeBug bug) : bug_(bug) {}
  std::string id() const override { return "driven-fake"; }
  std::string version() const override { return "1"; }
  bool needs_device() const override { return true; }
  Support supports(const ProblemSpec&, const DeviceInfo*) const override { return Support::yes(); }
  void prepare(const ProblemSpec&, Checkpoint&) override {}
  RunInfo run(const ProblemSpec&, const Checkpoint& w, const RoutingResult& r, Tensor& out) override {
    compute(w.x, r, out);
    return {};
  }
  static void compute(const Tensor& x, const RoutingResult& r, Tensor& out) {
    const std::int64_t t = x.dim(0), h = x.dim(1);
    for (std::int64_t i = 0; i < t; ++i) {
      float sum = 0;
      for (int j = 0; j < r.k; ++j) sum += r.weights[std::size_t(i * r.k + j)];
      for (std::int64_t c = 0; c < h; ++c) store_element(out, i * h + c, element_as_f32(x, i * h + c) * sum);
    }
  }

  std::string begin_device_probes(const ProblemSpec&, const Checkpoint& w, const RoutingResult& r) override {
    ++begun;
    captured_x_ = w.x.clone("captured_x");
    captured_r_ = r;
    return bug_ == FakeBug::unavailable ? "torch 1.13 has no CUDA device" : "";
  }
  std::string graph_replay_declined() const override {
    return bug_ == FakeBug::declined ? "the kernel declares graph_safe False" : "";
  }
  void stream_order_run(Tensor& out) override {
    if (bug_ != FakeBug::default_stream) compute(captured_x_, captured_r_, out);  // else: still queued, unwritten
  }
  std::string capture_graph() override {
    ++captures;
    return bug_ == FakeBug::capture_refused ? "RuntimeError: operation not permitted when stream is capturing" : "";
  }
  void replay_graph(const Tensor& x, const RoutingResult& r, Tensor& out) override {
    ++replays;
    if (bug_ == FakeBug::baked_at_capture) compute(captured_x_, captured_r_, out);
    else compute(x, r, out);
  }
  void end_device_probes() override { ++ended; }
  int begun = 0, captures = 0, replays = 0, ended = 0;

 private:
  FakeBug bug_;
  Tensor captured_x_;
  RoutingResult captured_r_;
};

struct DrivenCase {
  ProblemSpec p;
  Checkpoint working;
  RoutingResult routing;
  Tensor out;
  DrivenCase() {
    p.tokens = 3;
    p.hidden = 2;
    working.x = rows({1, 2, 3, 4, 5, 6}, 3);  // three distinct rows
    routing = {3, 2, {0, 1, 1, 2, 2, 3}, {0.5f, 0.25f, 1.0f, 0.5f, 0.25f, 0.125f}};
    out = Tensor("out", DType::f32, {3, 2});
    DrivenFake::compute(working.x, routing, out);
  }
  ProbeOutcome probe(DrivenFake& k) const { return run_device_probes(p, k, working, routing, out, Check::none, true); }
};

std::string status_of(const ProbeOutcome& o, const std::string& name) {
  for (const auto& [n, s] : o.status)
    if (n == name) return s;
  return "<absent>";
}

TEST(DrivenDeviceProbes, ARightKernelRunsBothProbesWithNothingApart) {
  const DrivenCase c;
  DrivenFake k(FakeBug::none);
  const ProbeOutcome o = c.probe(k);
  EXPECT_EQ(o.failed_check, Check::none) << o.reason;
  EXPECT_EQ(status_of(o, "stream_order"), "ran");
  EXPECT_EQ(status_of(o, "graph_replay"), "ran");
  EXPECT_EQ(o.metrics.at("stream_order_rows_apart"), 0);
  EXPECT_EQ(o.metrics.at("graph_replay_rows_apart"), 0);
  EXPECT_EQ(k.captures, 1);
  EXPECT_EQ(k.replays, 2);  // rotated, then the case's own
  EXPECT_EQ(k.ended, 1);
}

TEST(DrivenDeviceProbes, ValuesBakedAtCaptureFailTheRotatedReplayOnEveryRow) {
  const DrivenCase c;
  DrivenFake k(FakeBug::baked_at_capture);
  const ProbeOutcome o = c.probe(k);
  ASSERT_EQ(o.failed_check, Check::graph_replay);
  // Three distinct rows rotated by one: every row of the first replay is apart, none of the second.
  EXPECT_EQ(o.metrics.at("graph_replay_rows_apart"), 3);
  EXPECT_NE(o.reason.find("graph_replay: replay 1 of the captured graph (the tokens rotated by one"), std::string::npos)
      << o.reason;
  EXPECT_NE(o.reason.find("gave 3 of 3 output rows (first: row 0)"), std::string::npos) << o.reason;
  EXPECT_EQ(status_of(o, "stream_order"), "ran");
  EXPECT_EQ(status_of(o, "graph_replay"), "ran");
}

TEST(DrivenDeviceProbes, WorkOnTheDefaultStreamFailsStreamOrderAndGraphReplayDoesNotRun) {
  const DrivenCase c;
  DrivenFake k(FakeBug::default_stream);
  const ProbeOutcome o = c.probe(k);
  ASSERT_EQ(o.failed_check, Check::stream_order);
  EXPECT_EQ(o.metrics.at("stream_order_rows_apart"), 3);  // every row still the sentinel
  EXPECT_NE(o.reason.find("3 of 3 output rows (first: token 0) differ"), std::string::npos) << o.reason;
  EXPECT_EQ(status_of(o, "graph_replay"), "not run: stream_order failed first");
  EXPECT_EQ(k.captures, 0);
  EXPECT_EQ(k.ended, 1);
}

TEST(DrivenDeviceProbes, NoDeviceForTheFrameworkSaysNotRunForBothWithItsReason) {
  const DrivenCase c;
  DrivenFake k(FakeBug::unavailable);
  const ProbeOutcome o = c.probe(k);
  EXPECT_EQ(o.failed_check, Check::none);
  EXPECT_EQ(status_of(o, "stream_order"), "not run: torch 1.13 has no CUDA device");
  EXPECT_EQ(status_of(o, "graph_replay"), "not run: torch 1.13 has no CUDA device");
  EXPECT_TRUE(o.metrics.empty());
  EXPECT_EQ(k.ended, 1);
}

TEST(DrivenDeviceProbes, AKernelDeclaringItselfNotGraphSafeRunsStreamOrderOnly) {
  const DrivenCase c;
  DrivenFake k(FakeBug::declined);
  const ProbeOutcome o = c.probe(k);
  EXPECT_EQ(o.failed_check, Check::none);
  EXPECT_EQ(status_of(o, "stream_order"), "ran");
  EXPECT_EQ(status_of(o, "graph_replay"), "not run: the kernel declares graph_safe False");
  EXPECT_EQ(k.captures, 0);
  EXPECT_EQ(o.metrics.count("graph_replay_rows_apart"), 0u);
}

TEST(DrivenDeviceProbes, ACaptureTheFrameworkRefusesFailsGraphReplayInItsWords) {
  const DrivenCase c;
  DrivenFake k(FakeBug::capture_refused);
  const ProbeOutcome o = c.probe(k);
  ASSERT_EQ(o.failed_check, Check::graph_replay);
  EXPECT_EQ(o.reason, "graph_replay: the run could not be captured into a graph: RuntimeError: operation not "
                      "permitted when stream is capturing");
  EXPECT_EQ(status_of(o, "graph_replay"), "ran");
  EXPECT_EQ(k.replays, 0);
}

TEST(DrivenDeviceProbes, AFailedCheckOrTheSwitchOffKeepsTheDriverUntouched) {
  const DrivenCase c;
  DrivenFake k(FakeBug::none);
  const ProbeOutcome failed = run_device_probes(c.p, k, c.working, c.routing, c.out, Check::rerun, true);
  EXPECT_EQ(status_of(failed, "graph_replay"), "not run: the case failed rerun first");
  const ProbeOutcome off = run_device_probes(c.p, k, c.working, c.routing, c.out, Check::none, false);
  EXPECT_EQ(status_of(off, "stream_order"), "not run: turned off (--no-token-probes)");
  EXPECT_EQ(k.begun, 0);
}

}  // namespace
}  // namespace moe
