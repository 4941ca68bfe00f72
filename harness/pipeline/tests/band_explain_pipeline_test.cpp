// The requantization band's explanation test through the whole pipeline (docs/judging.md "The band's explanation
// test"): on quantized-activation cases the band's rule alone takes a wrong token as its one allowed token; with
// the test, the two catalog mutants made for it fail min_cos with "not a requantization difference", and the clean
// host kernel has no band token rejected.
#include <gtest/gtest.h>

#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/run/kernel_registry.hpp"

namespace moe {
namespace {

// Quantized-activation decode cases: per token, 1x128 groups with a per-token shared expert, MX blocks.
Suite quantized() {
  return load_suite_text(R"(suite: t
defaults: {hidden: 256, inter: 256, experts: 16, topk: 4}
cases:
  - {tokens: 7, quant: {weight: fp8_channel, act: fp8_token}}
  - {tokens: 3, quant: {weight: fp8_block, act: fp8_group128}, n_shared: 1, shared_inter: 128,
     shared_quant: {weight: fp8_channel, act: fp8_token}}
  - {tokens: 6, quant: {weight: mxfp8, act: mxfp8, mx_mode: floor}}
)", "t.yaml");
}

CaseRecord run(const CaseSpec& c, const std::string& kernel) {
  const auto k = make_kernel_by_id(kernel, 1e30);
  PipelineOptions opt;
  opt.token_probes = false;
  return execute_case(c, *k, DeviceDetection{}, opt);
}

TEST(BandExplainPipeline, AnOrthogonalErrorOnOneTokenIsNotARequantizationDifference) {
  for (const CaseSpec& c : quantized().cases) {
    const CaseRecord r = run(c, "host-contract~token_orthogonal_3pct");
    EXPECT_EQ(r.status, Status::fail) << c.id;
    EXPECT_EQ(r.failed_check, Check::min_cos) << c.id << ": " << r.reason;
    EXPECT_NE(r.reason.find("token 0 (cos"), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find("is not a requantization difference"), std::string::npos) << r.reason;
    // Token 0 was inside the band's rel edge: without the test it would have been the band's allowed token.
    EXPECT_EQ(r.metrics.at("band_rejected"), 1.0) << c.id;
    EXPECT_EQ(r.metrics.at("band_tokens"), 0.0) << c.id;
    EXPECT_GT(r.metrics.at("band_explain_ratio"), kExplainMaxRatio) << c.id;
    EXPECT_EQ(r.metrics.at("band_explain_run"), 1.0) << c.id;
  }
}

TEST(BandExplainPipeline, GateAndUpSwappedOnOneExpertFail) {
  for (const CaseSpec& c : quantized().cases) {
    const CaseRecord r = run(c, "host-contract~gate_up_swapped_one_expert");
    EXPECT_EQ(r.status, Status::fail) << c.id;
    EXPECT_EQ(r.metrics.at("band_tokens"), 0.0) << c.id << ": no token of it may stay in the band";
  }
}

TEST(BandExplainPipeline, TheCleanKernelHasNoBandTokenRejected) {
  for (const CaseSpec& c : quantized().cases) {
    const CaseRecord r = run(c, "host-contract");
    EXPECT_EQ(r.status, Status::pass) << c.id << ": " << r.reason;
    EXPECT_EQ(r.metrics.at("band_rejected"), 0.0) << c.id;
    EXPECT_EQ(r.metrics.count("band_explain_run"), 0u) << c.id << ": no token inside the band's edge";
  }
}

}  // namespace
}  // namespace moe
