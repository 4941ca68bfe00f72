// The GPU fused MoE kernels judged through the same pipeline as every kernel. Without a GPU each test skips and
// says why; a GPU that answers but cannot be identified fails (gating never turns that into a skip).
#include <gtest/gtest.h>

#include "harness/case_loader.hpp"
#include "harness/case_pipeline.hpp"
#include "kernels/gpu/gpu_fused_moe_kernel.hpp"
#include "kernels/gpu/gpu_routing.hpp"

#include <algorithm>
#include <cmath>

namespace moe {
namespace {
const DeviceDetection& device() {
  static const DeviceDetection d = detect_device();
  return d;
}
#define REQUIRE_GPU()                                                                       \
  do {                                                                                      \
    if (device().query_failed) FAIL() << "GPU runtime answered but: " << device().message;  \
    if (!device().device) GTEST_SKIP() << "no GPU: " << device().message;                   \
  } while (0)

Suite suite() {
  return load_suite_text(R"(suite: gpu-unit
defaults: {hidden: 256, inter: 256, experts: 16, topk: 4}
cases:
  - sweep: {tokens: [1, 5, 16, 40], reduce: [atomic, separate, per_k]}
  - sweep: {tokens: [3, 33], stage: [one_stage, two_stage]}
  - {tokens: 7, activation: gelu_tanh, layout: up_gate, input_dtype: f16, output_dtype: f16, intermediate: f16, quant: {weight: fp16}}
  - {tokens: 7, activation: swiglu_oai, biases: true, n_shared: 1, shared_inter: 128, clamp_shared: false}
  - {tokens: 6, topk: 1, routing: {kind: sigmoid_top1}, router_weight_on: input, n_shared: 1, shared_inter: 128}
  - {tokens: 9, ep: 2, ep_rank: 1}
  - {tokens: 5, quant: {weight: fp8_tensor, act: fp8_token}}
  - {tokens: 5, quant: {weight: fp8_channel, act: fp8_token, flavor: fnuz, qmax: 224}}
  - {tokens: 16, reduce: separate, quant: {weight: fp8_channel, act: fp8_token}}
  - {tokens: 33, quant: {weight: fp8_block, act: fp8_group128}, n_shared: 1, shared_inter: 128, shared_quant: {weight: fp8_channel, act: fp8_token}}
  - {tokens: 7, quant: {weight: fp8_block, act: fp8_group128, flavor: fnuz, scale_pow2: true}}
  - {tokens: 8, quant: {weight: mxfp8, act: mxfp8, mx_mode: floor}}
  - {tokens: 5, activation: swiglu_oai, biases: true, quant: {weight: mxfp4, act: none}}
  - {tokens: 6, quant: {weight: mxfp4, act: fp8_token}}
  - {tokens: 6, quant: {weight: mxfp4, act: mxfp8, mx_mode: even, e8m0_edges: triton}}
  - {tokens: 4, activation: swiglu_oai, quant: {weight: mxfp4, act: none}, n_shared: 1, shared_inter: 128, shared_quant: {weight: mxfp4, act: none}, clamp_shared: false}
  - {tokens: 6, topk: 1, routing: {kind: sigmoid_top1}, router_weight_on: input, quant: {weight: fp8_channel, act: fp8_token}}
  - {tokens: 64, topk: 8, experts: 8, reduce: separate}
  - {tokens: 11, hidden: 196, inter: 100, reduce: separate}
  - {tokens: 9, n_shared: 1, shared_inter: 60, reduce: per_k}
  - {tokens: 12, hidden: 264, quant: {weight: fp8_channel, act: fp8_token}}
)", "gpu-unit.yaml");
}
}  // namespace

TEST(GpuFusedMoe, EveryUnitCasePasses) {
  REQUIRE_GPU();
  GpuFusedMoeKernel k;
  for (const CaseSpec& c : suite().cases) {
    const CaseRecord r = execute_case(c, k, device(), {});
    EXPECT_EQ(r.status, "pass") << c.id << ": " << r.reason << "\n" << r.details;
  }
}

// Two-stage runs the grouped kernels (slots sorted by expert) when every row length is a multiple of the elements
// one 16-byte load holds in the routed weight format (8 of 16 bits, 16 of fp8, 32 of fp4), and the row-wise
// kernels otherwise; the grouped kernels take 2 tokens per pass where the sets they list (at most min(sets, slots))
// average at most two slots, else 8. The report names which ran.
TEST(GpuFusedMoe, TwoStageIsGroupedWhereRowsHoldWhole16ByteChunksAndRowWiseElsewhere) {
  REQUIRE_GPU();
  GpuFusedMoeKernel k;
  int grouped = 0, row_wise = 0, few = 0;
  for (const CaseSpec& c : suite().cases) {
    if (c.problem.stage == StageMode::one_stage) continue;
    const CaseRecord r = execute_case(c, k, device(), {});
    const ProblemSpec& p = c.problem;
    const WeightFormat f = p.quant.weight;
    const int bytes_x2 = f == WeightFormat::mxfp4 ? 1 : (f == WeightFormat::bf16 || f == WeightFormat::fp16) ? 4 : 2;
    const int v = 2 * 16 / bytes_x2;  // elements per 16 bytes
    const bool odd = p.hidden % v != 0 || p.local_inter() % v != 0 || (p.n_shared > 0 && p.local_shared_inter() % v != 0);
    const long slots = long(p.tokens) * (p.topk + p.n_shared), sets = long(p.local_experts()) + p.n_shared;
    const bool two = slots <= 2 * std::min(slots, sets);
    const std::string want = odd ? "two_stage/" : two ? "grouped-t2/" : "grouped-t8/";
    EXPECT_EQ(r.variant.rfind(want, 0), 0u) << c.id << ": " << r.variant;
    (odd ? row_wise : grouped) += 1;
    few += !odd && two;
  }
  EXPECT_GE(grouped, 10);
  EXPECT_GE(few, 5);
  EXPECT_EQ(row_wise, 3);  // H196/I100, shared inter 60 (bf16), H264 (fp8: 8 but not 16 elements per row chunk)
}

TEST(GpuFusedMoe, AFailingLaunchIsAReportedCaseErrorWithTheRuntimeMessage) {
  REQUIRE_GPU();
  GpuFusedMoeKernel k(/*fail_launch_for_test=*/true);
  const CaseRecord r = execute_case(suite().cases[0], k, device(), {});
  EXPECT_EQ(r.status, "error");
  EXPECT_NE(r.reason.find("failed"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("one_stage_kernel"), std::string::npos) << r.reason;
  // The process is still healthy: the next case on a sound kernel passes.
  GpuFusedMoeKernel ok;
  EXPECT_EQ(execute_case(suite().cases[0], ok, device(), {}).status, "pass");
}

// Device routing against the reference's ids and weights. Softmax and sigmoid use the device's expf, which may
// differ from the host's by an ulp: a token whose k-th and (k+1)-th scores are that close may legitimately swap,
// so such near-ties are counted and excluded; everything else must match exactly (ids) and to 1e-6 (weights).
TEST(GpuRouting, MatchesTheReferenceIdsAndWeights) {
  REQUIRE_GPU();
  std::vector<ProblemSpec> specs;
  ProblemSpec s;
  s.hidden = 64; s.inter = 64; s.tokens = 512; s.seed = 3;
  s.experts = 256; s.topk = 8; s.routing = {RoutingKind::softmax_topk, true, 1, 1, 1.0f}; specs.push_back(s);
  s.routing.renormalize = false; specs.push_back(s);
  s.routing = {RoutingKind::grouped_sigmoid, true, 8, 4, 2.5f}; specs.push_back(s);
  s.experts = 384; s.routing = {RoutingKind::grouped_sigmoid, true, 1, 1, 2.827f}; specs.push_back(s);
  s.experts = 16; s.topk = 1; s.routing = {RoutingKind::sigmoid_top1, false, 1, 1, 1.0f}; specs.push_back(s);
  for (const ProblemSpec& p : specs) {
    const Checkpoint c = generate_checkpoint(p);
    const RoutingResult want = route(p, c), got = gpu_route(p, c);
    int near_ties = 0, mismatched = 0;
    for (std::int64_t t = 0; t < p.tokens; ++t) {
      bool same = true;
      for (int j = 0; j < p.topk; ++j) same &= want.ids[t * p.topk + j] == got.ids[t * p.topk + j];
      if (same) {
        for (int j = 0; j < p.topk; ++j)
          EXPECT_NEAR(got.weights[t * p.topk + j], want.weights[t * p.topk + j], 1e-6f * std::fabs(want.weights[t * p.topk + j]) + 1e-7f);
        continue;
      }
      // Swapped only within a near-tie of the reference's selection scores?
      ++near_ties;
      std::vector<float> w(got.weights.begin() + t * p.topk, got.weights.begin() + (t + 1) * p.topk);
      std::vector<float> r(want.weights.begin() + t * p.topk, want.weights.begin() + (t + 1) * p.topk);
      std::sort(w.begin(), w.end());
      std::sort(r.begin(), r.end());
      for (int j = 0; j < p.topk; ++j)
        if (std::fabs(w[j] - r[j]) > 1e-5f * std::fabs(r[j]) + 1e-6f) { ++mismatched; break; }
    }
    EXPECT_EQ(mismatched, 0) << name(p.routing.kind);
    EXPECT_LE(near_ties, 2) << name(p.routing.kind) << ": more near-ties than expf ulps explain";
  }
}

TEST(GpuFusedMoe, DeclinesOneStageWithQuantizedActivationsWithAReason) {
  GpuFusedMoeKernel k;
  ProblemSpec p;
  p.quant.weight = WeightFormat::fp8_channel;
  p.quant.act = ActFormat::fp8_token;
  EXPECT_TRUE(k.supports(p, nullptr).supported);  // auto: the two-stage path
  p.stage = StageMode::one_stage;
  const Support s = k.supports(p, nullptr);
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("quantized activations"), std::string::npos);
}

}  // namespace moe
