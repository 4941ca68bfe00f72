// The whole pipeline on the host contract kernel, and the pipeline's own guards.
#include <gtest/gtest.h>

#include <cstring>

#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "kernels/host/host_contract_kernel.hpp"
#include "fixtures/checkpoint.hpp"
#include "fixtures/tensor_element.hpp"
#include "reference/moe/reference_moe.hpp"

namespace moe {
namespace {
Suite small_suite() {
  return load_suite_text(R"(suite: t
defaults: {hidden: 128, inter: 128, experts: 8, topk: 2}
cases:
  - sweep: {tokens: [1, 5], reduce: [atomic, separate, per_k]}
  - {tokens: 4, quant: {weight: fp8_channel, act: fp8_token, flavor: fnuz, qmax: 224}}
  - {tokens: 4, quant: {weight: fp8_block, act: fp8_group128}, n_shared: 1, shared_inter: 64}
  - {tokens: 4, activation: swiglu_oai, biases: true, quant: {weight: mxfp4, act: none}}
  - {tokens: 4, quant: {weight: mxfp8, act: mxfp8, mx_mode: floor}}
  - {tokens: 3, topk: 1, routing: {kind: sigmoid_top1}, router_weight_on: input}
)", "t.yaml");
}
}  // namespace

TEST(HostPipeline, EveryCasePassesAgainstTheContractReference) {
  HostContractKernel k;
  DeviceDetection none;
  for (const CaseSpec& c : small_suite().cases) {
    const CaseRecord r = execute_case(c, k, none, {});
    EXPECT_EQ(r.status, Status::pass) << c.id << ": " << r.reason << "\n" << r.details;
    EXPECT_GT(r.metrics.at("min_cos"), 0.999);
  }
}

TEST(HostPipeline, DeclinesAboveItsBudgetWithAReason) {
  HostContractKernel k(1e4);
  DeviceDetection none;
  const CaseRecord r = execute_case(small_suite().cases[0], k, none, {});
  EXPECT_EQ(r.status, Status::skip);
  EXPECT_NE(r.reason.find("budget"), std::string::npos);
}

TEST(HostPipeline, WritingIntoThePristineTensorsIsAHarnessErrorNotAPass) {
  HostContractKernel k;
  DeviceDetection none;
  PipelineOptions opt;
  opt.after_kernel_hook = [](Checkpoint& pristine) { pristine.routed.w13.bytes()[0] ^= std::byte{0x80}; };
  const CaseRecord r = execute_case(small_suite().cases[0], k, none, opt);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_NE(r.reason.find("reference inputs were mutated: the pristine checkpoint's w13 changed"), std::string::npos)
      << r.reason;
}

namespace {
// A kernel that leaves the last token unwritten (non-power-of-two batch bug).
class DropsLastToken : public HostContractKernel {
 public:
  RunInfo run(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r, Tensor& out) override {
    Tensor full("full", out.dtype(), out.shape());
    RunInfo info = HostContractKernel::run(p, c, r, full);
    std::memcpy(out.bytes(), full.bytes(), out.nbytes() - std::size_t(p.hidden) * dtype_size(out.dtype()));
    return info;
  }
};
}  // namespace

TEST(HostPipeline, UnwrittenLastTokenIsCaught) {
  DropsLastToken k;
  DeviceDetection none;
  const CaseRecord r = execute_case(small_suite().cases[1], k, none, {});  // tokens 5
  EXPECT_EQ(r.status, Status::fail);
  EXPECT_EQ(r.failed_check, Check::unwritten);
}

namespace {
// A kernel whose second run differs from its first in one element (a race), and one that skips an element on its
// second run (it "remembers" the output from the first): both pass a single-run judge.
class RacyKernel : public HostContractKernel {
 public:
  RunInfo run(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r, Tensor& out) override {
    RunInfo info = HostContractKernel::run(p, c, r, out);
    if (++runs_ == 2) out.span<std::uint16_t>()[3] ^= 1;  // one bf16 ulp
    return info;
  }
  int runs_ = 0;
};
class LazySecondRun : public HostContractKernel {
 public:
  RunInfo run(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r, Tensor& out) override {
    const std::uint16_t keep = out.span<std::uint16_t>()[7];
    RunInfo info = HostContractKernel::run(p, c, r, out);
    if (++runs_ == 2) out.span<std::uint16_t>()[7] = keep;  // element 7 left as it was: the sentinel
    return info;
  }
  int runs_ = 0;
};
}  // namespace

TEST(HostPipeline, RerunProbeCatchesNondeterminismAndSecondRunHoles) {
  DeviceDetection none;
  RacyKernel racy;
  CaseRecord r = execute_case(small_suite().cases[1], racy, none, {});
  EXPECT_EQ(r.status, Status::fail);
  EXPECT_EQ(r.failed_check, Check::rerun);
  EXPECT_NE(r.reason.find("differs from the first in 1 element"), std::string::npos) << r.reason;
  LazySecondRun lazy;
  r = execute_case(small_suite().cases[1], lazy, none, {});
  EXPECT_EQ(r.failed_check, Check::rerun);
  EXPECT_NE(r.reason.find("left 1 element(s) unwritten"), std::string::npos) << r.reason;
  // The correct kernel is deterministic and writes everything twice.
  HostContractKernel ok;
  r = execute_case(small_suite().cases[1], ok, none, {});
  EXPECT_EQ(r.status, Status::pass);
  EXPECT_EQ(r.metrics.at("rerun_mismatches"), 0.0);
}

TEST(HostPipeline, SameWeightsFromTheCacheAsGeneratedDirectly) {
  WeightCache cache;
  const Suite s = small_suite();
  const auto& p = s.cases[1].problem;
  const Checkpoint direct = generate_checkpoint(p);
  Checkpoint first = cache.checkpoint_for(p);
  EXPECT_EQ(first.fingerprint(), direct.fingerprint());
  cache.give_back(p, std::move(first));
  EXPECT_EQ(cache.checkpoint_for(p).fingerprint(), direct.fingerprint());  // lent again, inputs drawn again
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
  // Not given back (a case that stopped before its pristine check): the next case gets weights generated anew.
  EXPECT_EQ(cache.checkpoint_for(p).fingerprint(), direct.fingerprint());
  EXPECT_EQ(cache.misses(), 2u);
}

// The cache lends its weights to a case; a kernel that writes into the pristine tensors (here the hook, after the
// kernel) is a harness error and its weights never go back, so the next case of the same weights judges clean ones.
TEST(HostPipeline, WeightsWrittenDuringACaseNeverReachTheNextCase) {
  const Suite s = small_suite();
  WeightCache cache;
  HostContractKernel k;
  DeviceDetection none;
  PipelineOptions opt;
  opt.weights = &cache;
  const CaseRecord clean = execute_case(s.cases[0], k, none, opt);
  ASSERT_EQ(clean.status, Status::pass) << clean.reason;
  opt.after_kernel_hook = [](Checkpoint& pristine) { pristine.routed.w2.bytes()[5] ^= std::byte{0x40}; };
  const CaseRecord hit = execute_case(s.cases[0], k, none, opt);
  EXPECT_EQ(hit.status, Status::error);
  opt.after_kernel_hook = nullptr;
  const CaseRecord after = execute_case(s.cases[0], k, none, opt);
  EXPECT_EQ(after.status, Status::pass) << after.reason;
  EXPECT_EQ(after.fixture_fingerprint, clean.fixture_fingerprint);
  EXPECT_EQ(after.token_cos, clean.token_cos);
  EXPECT_EQ(cache.hits(), 1u);    // the second case borrowed the first's weights
  EXPECT_EQ(cache.misses(), 2u);  // the third generated its own: the written ones were not given back
}

}  // namespace moe

namespace moe {
namespace {
// Kernels that pass every tolerance but break the exact linearity of router weights: one bends the weight slightly
// (w * (1 + w / 16384): under 0.01% off, far inside the bf16 thresholds), one lets every token see a trace of the
// batch's total weight (a cross-token leak).
class BendsRouterWeights : public HostContractKernel {
 public:
  RunInfo run(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r, Tensor& out) override {
    RoutingResult bent = r;
    for (float& w : bent.weights) w *= 1.0f + w / 16384.0f;
    return HostContractKernel::run(p, c, bent, out);
  }
};
class LeaksAcrossTokens : public HostContractKernel {
 public:
  RunInfo run(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r, Tensor& out) override {
    float total = 0.0f;
    for (float w : r.weights) total += w;
    RoutingResult leaky = r;
    for (float& w : leaky.weights) w += total * 1e-4f;
    return HostContractKernel::run(p, c, leaky, out);
  }
};
}  // namespace

// The kernel passes every tolerance without the probe and fails on the probe, with the reason naming the breach.
static void expect_only_the_linearity_probe_catches(const CaseSpec& c, KernelUnderTest& k, const std::string& reason) {
  PipelineOptions no_probe;
  no_probe.linearity_probe = false;
  EXPECT_EQ(execute_case(c, k, DeviceDetection{}, no_probe).status, Status::pass) << c.id;  // tolerance alone: through
  const CaseRecord r = execute_case(c, k, DeviceDetection{}, {});
  EXPECT_EQ(r.status, Status::fail) << c.id;
  EXPECT_EQ(r.failed_check, Check::linearity);
  EXPECT_NE(r.reason.find(reason), std::string::npos) << r.reason;
}

TEST(HostPipeline, LinearityProbeCatchesBentRouterWeightsThatPassEveryTolerance) {
  BendsRouterWeights k;
  const Suite s = small_suite();
  const CaseSpec& c = s.cases[3];  // tokens 5, weights on the output, no shared expert
  ASSERT_NE(c.id.find("/T5/"), std::string::npos) << c.id;
  expect_only_the_linearity_probe_catches(c, k, "not exactly doubled");
}

TEST(HostPipeline, LinearityProbeCatchesACrossTokenLeakWithSharedExperts) {
  LeaksAcrossTokens k;
  // A shared expert on this rank: the all-weights probe does not apply, the one-expert probe does.
  const Suite s = load_suite_text(R"(suite: t
cases:
  - {hidden: 128, inter: 128, experts: 8, topk: 2, tokens: 9, n_shared: 1, shared_inter: 64}
)", "t.yaml");
  expect_only_the_linearity_probe_catches(s.cases[0], k, "tokens that do not route to it changed");
}

TEST(HostPipeline, LinearityProbeHoldsExactlyOnTheCleanKernel) {
  HostContractKernel k;
  DeviceDetection none;
  const Suite s = small_suite();
  for (const CaseSpec& c : s.cases) {
    const CaseRecord r = execute_case(c, k, none, {});
    EXPECT_EQ(r.status, Status::pass) << c.id << ": " << r.reason;
    EXPECT_EQ(r.metrics.at("linearity_mismatches"), 0.0) << c.id;
  }
}

// An error raised inside the kernel's per-token OpenMP region (an MXFP8 spec over an fp8 checkpoint: its f32 scales
// cannot be read as E8M0 bytes) reaches the caller as a moe::Error, not std::terminate.
TEST(HostContractKernel, AnErrorInsideTheTokenRegionReachesTheCaller) {
  ProblemSpec s;
  s.hidden = 128; s.inter = 128; s.experts = 8; s.topk = 2; s.tokens = 6;
  s.quant.weight = WeightFormat::fp8_channel; s.quant.act = ActFormat::fp8_token;
  const Checkpoint c = generate_checkpoint(s);
  const RoutingResult r = route(s, c);
  ProblemSpec mx = s;
  mx.quant.weight = WeightFormat::mxfp8; mx.quant.act = ActFormat::none;
  Tensor out("out", DType::bf16, {s.tokens, s.hidden});
  HostContractKernel k;
  try {
    (void)k.run(mx, c, r, out);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::harness_error);
    EXPECT_NE(std::string(e.what()).find("w13_scale"), std::string::npos) << e.what();
  }
}

}  // namespace moe

namespace moe {
namespace {
class DeclaresNondeterministic : public HostContractKernel {
 public:
  bool deterministic(const ProblemSpec&) const override { return false; }
};
std::string probe(const CaseRecord& r, const std::string& name) {
  for (const auto& [n, st] : r.probes)
    if (n == name) return st;
  return "(absent)";
}
}  // namespace

// A probe that did not run leaves no mismatch count behind: 0 would read as "ran and found nothing".
TEST(HostPipeline, ProbesThatDidNotRunHaveNoMismatchMetrics) {
  DeviceDetection none;
  DropsLastToken failing;
  CaseRecord r = execute_case(small_suite().cases[1], failing, none, {});
  ASSERT_EQ(r.failed_check, Check::unwritten);
  for (const char* m : {"rerun_unwritten", "rerun_mismatches", "linearity_mismatches"}) EXPECT_EQ(r.metrics.count(m), 0u) << m;
  PipelineOptions off;
  off.rerun_probe = off.linearity_probe = false;
  HostContractKernel ok;
  r = execute_case(small_suite().cases[1], ok, none, off);
  ASSERT_EQ(r.status, Status::pass);
  for (const char* m : {"rerun_unwritten", "rerun_mismatches", "linearity_mismatches"}) EXPECT_EQ(r.metrics.count(m), 0u) << m;
  DeclaresNondeterministic nd;
  r = execute_case(small_suite().cases[1], nd, none, {});
  ASSERT_EQ(r.status, Status::pass);
  EXPECT_EQ(r.metrics.count("linearity_mismatches"), 0u);
  EXPECT_EQ(r.metrics.at("rerun_unwritten"), 0.0);  // the rerun itself ran
}

TEST(HostPipeline, ProbesSayWhichRanAndWhyTheOthersDidNot) {
  DeviceDetection none;
  HostContractKernel ok;
  const Suite s = small_suite();
  CaseRecord r = execute_case(s.cases[1], ok, none, {});  // weights on the output, no shared expert
  ASSERT_EQ(r.status, Status::pass);
  for (const char* p : {"rerun", "rerun_identical", "linearity_all_weights", "linearity_one_expert"}) EXPECT_EQ(probe(r, p), "ran") << p;
  EXPECT_EQ(r.metrics.at("rerun_mismatches"), 0.0);
  EXPECT_EQ(r.metrics.at("linearity_mismatches"), 0.0);
  EXPECT_NE(r.details.find("probes: rerun ran; rerun_identical ran"), std::string::npos) << r.details;

  auto find = [&](auto pred) {
    for (const CaseSpec& c : s.cases) if (pred(c.problem)) return c;
    ADD_FAILURE() << "no such case";
    return s.cases[0];
  };
  r = execute_case(find([](const ProblemSpec& p) { return p.n_shared > 0; }), ok, none, {});  // shared expert, rank 0
  ASSERT_EQ(r.status, Status::pass) << r.id;
  EXPECT_EQ(probe(r, "linearity_all_weights"), "not run: a shared expert on this rank adds an output no router weight scales");
  EXPECT_EQ(probe(r, "linearity_one_expert"), "ran");
  r = execute_case(find([](const ProblemSpec& p) { return p.router_weight_on == RouterWeightOn::input; }), ok, none, {});
  ASSERT_EQ(r.status, Status::pass) << r.id;
  EXPECT_EQ(probe(r, "linearity_all_weights"), "not run: the router weight is applied to the input, where doubling it is not exact");

  DropsLastToken failing;
  r = execute_case(s.cases[1], failing, none, {});
  for (const char* p : {"rerun", "rerun_identical", "linearity_all_weights", "linearity_one_expert"})
    EXPECT_EQ(probe(r, p), "not run: the case failed first (unwritten)") << p;
  PipelineOptions off;
  off.rerun_probe = off.linearity_probe = false;
  r = execute_case(s.cases[1], ok, none, off);
  for (const char* p : {"rerun", "rerun_identical", "linearity_all_weights", "linearity_one_expert"})
    EXPECT_EQ(probe(r, p), "not run: turned off for this command") << p;
  DeclaresNondeterministic nd;
  r = execute_case(s.cases[1], nd, none, {});
  EXPECT_EQ(probe(r, "rerun"), "ran");
  EXPECT_EQ(probe(r, "rerun_identical").rfind("not run: the kernel declares itself non-deterministic", 0), 0u);
  EXPECT_EQ(probe(r, "linearity_one_expert").rfind("not run: the kernel declares itself non-deterministic", 0), 0u);
  EXPECT_EQ(probe(r, "fixture_fingerprint"), "(absent)");  // only outputs computed elsewhere carry it
}

}  // namespace moe

namespace moe {
namespace {
// The host kernel with its output 0.3 % too large: every per-token check passes it (rel 3e-3 < 1.2e-2).
class GainKernel : public HostContractKernel {
 public:
  RunInfo run(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r, Tensor& out) override {
    RunInfo info = HostContractKernel::run(p, c, r, out);
    for (std::int64_t i = 0; i < out.numel(); ++i) store_element(out, i, element_as_f32(out, i) * 1.003f);
    return info;
  }
};
}  // namespace

// The systematic statistics come after the per-token checks, in the verdict: the gain fails the case, named, and no
// probe runs after it; the exact tier records them as not run (bit equality decides there).
TEST(HostPipeline, SystematicStatisticsJudgeStatisticalCasesAfterThePerTokenChecks) {
  const Suite s = small_suite();
  GainKernel k;
  const CaseRecord r = execute_case(s.cases[1], k, DeviceDetection{}, {});  // tokens 5, bf16
  EXPECT_EQ(r.status, Status::fail);
  EXPECT_EQ(r.failed_check, Check::gain) << r.reason;
  EXPECT_LT(r.metrics.at("max_rel"), 0.012);  // what the per-token checks saw: a pass
  ASSERT_EQ(r.systematic.size(), 9u);  // gain, channel, rounding_bias, expert, offset, token_gain, expert_partial,
                                       // slot_direction, channel_group
  EXPECT_EQ(r.systematic[0].name, "gain");
  EXPECT_TRUE(r.systematic[0].failed);
  EXPECT_NEAR(r.systematic[0].effect, 0.003, 5e-4);
  for (const auto& [probe, st] : r.probes) EXPECT_EQ(st.rfind("not run", 0), 0u) << probe << ": " << st;
  EXPECT_NE(r.details.find("gain: z "), std::string::npos) << r.details;

  const Suite exact = load_suite_text(R"(suite: e
defaults: {hidden: 128, inter: 128, experts: 8, topk: 2}
cases:
  - {tier: exact, tokens: 5, routing: {kind: precomputed}}
)", "e.yaml");
  HostContractKernel clean;
  const CaseRecord e = execute_case(exact.cases[0], clean, DeviceDetection{}, {});
  EXPECT_EQ(e.status, Status::pass) << e.reason;
  ASSERT_EQ(e.systematic.size(), 9u);
  for (const auto& st : e.systematic) EXPECT_EQ(st.status, "not run: exact tier: bit equality decides") << st.name;
}
}  // namespace moe
