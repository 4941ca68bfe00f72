// The GPU fused MoE kernels judged through the same pipeline as every kernel. Without a GPU each test skips and
// says why; a GPU that answers but cannot be identified fails (gating never turns that into a skip).
#include <gtest/gtest.h>

#include "harness/case_loader.hpp"
#include "harness/case_pipeline.hpp"
#include "kernels/gpu/gpu_fused_moe_kernel.hpp"

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

TEST(GpuFusedMoe, DeclinesQuantizedSchemesWithAReason) {
  GpuFusedMoeKernel k;
  ProblemSpec p;
  p.quant.weight = WeightFormat::fp8_channel;
  p.quant.act = ActFormat::fp8_token;
  const Support s = k.supports(p, nullptr);
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("quantized"), std::string::npos);
}

}  // namespace moe
