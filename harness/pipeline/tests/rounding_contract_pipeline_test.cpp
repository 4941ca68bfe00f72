// The rounding contract through the pipeline (harness/pipeline/rounding_resolution.hpp, docs/judging.md "The rounding
// contract"): the host kernel computes every point a case names through its own code; a kernel rounding like
// vLLM's pipeline passes when it declares so and fails when it lies; a pinned case judges every kernel against its
// own contract; the reference cache never serves one contract's reference to another.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "fixtures/tensor_element.hpp"
#include "kernels/host/host_contract_kernel.hpp"
#include "reference/routing/routing.hpp"
#include "reference/tests/scale_form_case.hpp"

namespace moe {
namespace {

RoundingContract text(const char* t) { return *parse_rounding_contract(t).contract; }
HostContractKernel vllm_like(const char* declares) {
  return HostContractKernel(HostContractKernel::kDefaultFlopBudget, nullptr,
                            {text("gate_up=bf16,slot=bf16"), text(declares)}, std::string("vllm-like@") + declares);
}
CaseRecord judged(const CaseSpec& c, KernelUnderTest& k) { return execute_case(c, k, DeviceDetection{}, {}); }

// Every point on every kind of case the host kernel runs, exact tier included (bit for bit).
const char* kPointSuite = R"(suite: t
defaults: {hidden: 128, inter: 128, experts: 8, topk: 2, tokens: 4}
cases:
  - sweep: {rounding_contract: ["gate_up=bf16", "slot=bf16", "reduce=bf16", "gate_up=f16,slot=f16,reduce=f16", "gate_up=bf16,slot=bf16"]}
  - {rounding_contract: "gate_up=bf16,slot=bf16,reduce=bf16", quant: {weight: fp8_block, act: fp8_group128}, n_shared: 1, shared_inter: 64, shared_path: separate}
  - {rounding_contract: "slot=bf16,reduce=bf16", activation: swiglu_oai, biases: true, quant: {weight: mxfp4, act: none}}
  - {rounding_contract: "gate_up=bf16,reduce=bf16", topk: 1, routing: {kind: sigmoid_top1}, router_weight_on: input}
  - {rounding_contract: "slot=bf16,reduce=bf16", tier: exact, routing: {kind: precomputed}, hidden: 136}
  - {rounding_contract: "token_scale_form=qmax_reciprocal,token_scale=reciprocal", quant: {weight: fp8_channel, act: fp8_token}, n_shared: 1, shared_inter: 64}
  - {rounding_contract: "group_scale_form=qmax_reciprocal", quant: {weight: fp8_block, act: fp8_group128}, n_shared: 1, shared_inter: 64, shared_quant: {weight: fp8_block, act: fp8_group128}}
)";

TEST(RoundingContractPipeline, TheHostKernelComputesEveryPointACaseNames) {
  HostContractKernel k;
  for (const CaseSpec& c : load_suite_text(kPointSuite, "t.yaml").cases) {
    const CaseRecord r = judged(c, k);
    EXPECT_EQ(r.status, Status::pass) << c.id << ": " << r.reason;
    EXPECT_EQ(r.contract.source, "case") << c.id;
    EXPECT_EQ(r.contract.effective, contract_text(c.problem)) << c.id;
    if (c.tier == Tier::exact) { EXPECT_EQ(r.metrics.at("bit_mismatches"), 0.0) << c.id; }
  }
}

// The exact tier's slots are sums on a grid of 16 below 2^20 (docs/numerics.md "The exact tier"): most are not
// bf16 values, so a slot rounded to bf16 changes bits a correct kernel must reproduce.
const char* kExact = R"(suite: t
cases:
  - {hidden: 136, inter: 128, experts: 8, topk: 2, tokens: 4, tier: exact, routing: {kind: precomputed}}
  - {hidden: 136, inter: 128, experts: 8, topk: 2, tokens: 4, tier: exact, routing: {kind: precomputed}, pin_rounding_contract: true}
)";

TEST(RoundingContractPipeline, AKernelRoundingLikeVllmPassesWhenItDeclaresSoAndFailsWhenItLies) {
  const Suite s = load_suite_text(kExact, "t.yaml");
  HostContractKernel honest = vllm_like("gate_up=bf16,slot=bf16"), liar = vllm_like("default");
  const CaseRecord ok = judged(s.cases[0], honest);
  EXPECT_EQ(ok.status, Status::pass) << ok.reason;
  EXPECT_EQ(ok.contract.effective, "gate_up=bf16,slot=bf16");
  EXPECT_EQ(ok.contract.source, "kernel");
  EXPECT_EQ(ok.contract.declared, "gate_up=bf16,slot=bf16");
  const CaseRecord lie = judged(s.cases[0], liar);
  EXPECT_EQ(lie.status, Status::fail);
  EXPECT_EQ(lie.failed_check, Check::bitwise) << lie.reason;
  EXPECT_EQ(lie.contract.effective, "default");
  EXPECT_EQ(lie.contract.source, "default");
}

TEST(RoundingContractPipeline, APinnedCaseJudgesEveryKernelAgainstItsOwnContract) {
  const Suite s = load_suite_text(kExact, "t.yaml");
  ASSERT_TRUE(s.cases[1].pin_rounding);
  HostContractKernel honest = vllm_like("gate_up=bf16,slot=bf16"), plain;
  const CaseRecord r = judged(s.cases[1], honest);
  EXPECT_EQ(r.status, Status::fail);
  EXPECT_EQ(r.contract.effective, "default");
  EXPECT_EQ(r.contract.source, "pinned");
  EXPECT_EQ(r.contract.not_applied, "gate_up=bf16,slot=bf16");
  EXPECT_NE(r.details.find("not applied: gate_up=bf16,slot=bf16 (the case pins its contract)"), std::string::npos)
      << r.details;
  const CaseRecord p = judged(s.cases[1], plain);
  EXPECT_EQ(p.status, Status::pass) << p.reason;
  EXPECT_EQ(p.contract.source, "pinned");
  EXPECT_EQ(p.contract.not_applied, "");
}

TEST(RoundingContractPipeline, AnOutputDtypeDeclarationIsNotAppliedTheTensorIsTheCases) {
  const Suite s = load_suite_text(kExact, "t.yaml");
  HostContractKernel k(HostContractKernel::kDefaultFlopBudget, nullptr, {{}, text("output=f32,slot=f32")}, "declares-f32");
  const CaseRecord r = judged(s.cases[0], k);
  EXPECT_EQ(r.status, Status::pass) << r.reason;
  EXPECT_EQ(r.contract.effective, "default");
  EXPECT_EQ(r.contract.source, "default");  // slot=f32 is the case's already; output is not applied
  EXPECT_EQ(r.contract.not_applied, "output=f32");
}

TEST(RoundingContractPipeline, TheCacheNeverServesOneContractsReferenceToAnother) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "moe_rounding_cache_test";
  std::filesystem::remove_all(dir);
  const Suite s = load_suite_text(kExact, "t.yaml");
  ReferenceCache cache(dir);
  PipelineOptions opt;
  opt.references = &cache;
  HostContractKernel plain, honest = vllm_like("gate_up=bf16,slot=bf16");
  EXPECT_EQ(execute_case(s.cases[0], plain, DeviceDetection{}, opt).status, Status::pass);
  const CaseRecord r = execute_case(s.cases[0], honest, DeviceDetection{}, opt);
  EXPECT_EQ(r.status, Status::pass) << r.reason;  // a default reference served here would fail it bit for bit
  EXPECT_EQ(cache.hits(), 0u);
  EXPECT_EQ(cache.misses(), 2u);
  EXPECT_EQ(execute_case(s.cases[0], honest, DeviceDetection{}, opt).status, Status::pass);
  EXPECT_EQ(cache.hits(), 1u);
  std::filesystem::remove_all(dir);
}

TEST(RoundingContractPipeline, AnOptionsDeclarationReplacesTheKernels) {
  const Suite s = load_suite_text(kExact, "t.yaml");
  HostContractKernel liar = vllm_like("default");
  PipelineOptions opt;
  opt.declared_contract = text("gate_up=bf16,slot=bf16");
  const CaseRecord r = execute_case(s.cases[0], liar, DeviceDetection{}, opt);
  EXPECT_EQ(r.status, Status::pass) << r.reason;
  EXPECT_EQ(r.contract.declared, "gate_up=bf16,slot=bf16");
}

}  // namespace
}  // namespace moe

namespace moe {
namespace {

// A nightly case on which h rounded to bf16 differs measurably from h kept in fp32 (measured on the host nightly:
// results/runs/2026-12-01-cpu-rounding-contract/RUN.md): both lies about the gate_up point fail it, the truth passes.
TEST(RoundingContractPipeline, EitherLieAboutTheGateUpPointFailsANightlyCase) {
  const Suite s = load_suite_file(resolve_suite("nightly"));
  const CaseSpec* c = nullptr;
  for (const CaseSpec& x : s.cases)
    if (x.id == "qwen3.5-35b-a3b/tp4/fp8pt.tok+sh.fp8ch.tok/silu/T5/decode/atomic") c = &x;
  ASSERT_NE(c, nullptr);
  HostContractKernel rounds_undeclared(HostContractKernel::kDefaultFlopBudget, nullptr, {text("gate_up=bf16"), {}}, "a");
  HostContractKernel declares_unrounded(HostContractKernel::kDefaultFlopBudget, nullptr,
                                        {text("gate_up=f32"), text("gate_up=bf16")}, "b");
  HostContractKernel honest(HostContractKernel::kDefaultFlopBudget, nullptr, {text("gate_up=bf16"), text("gate_up=bf16")}, "c");
  for (HostContractKernel* k : {&rounds_undeclared, &declares_unrounded}) {
    const CaseRecord r = judged(*c, *k);
    EXPECT_EQ(r.status, Status::fail) << k->id() << ": " << r.reason;
  }
  const CaseRecord ok = judged(*c, honest);
  EXPECT_EQ(ok.status, Status::pass) << ok.reason;
  EXPECT_EQ(ok.contract.effective, "gate_up=bf16");
}

// The host kernel's fp8 quantizer forms s as the case's scale-form point says, on the input as on the intermediate
// (the hand case of reference/tests/scale_form_case.hpp: 55.125 for amax / qmax, 51.1875 for amax * fp32(1 / qmax)),
// and a kernel whose own pipeline forms it that way computes it whatever the case names.
TEST(RoundingContractPipeline, TheHostKernelFormsTheScaleAsThePointSays) {
  const auto out_of = [](const ScaleFormCase& t, HostContractKernel& k) {
    Tensor out("out", DType::f32, {1, 2});
    k.run(t.spec, t.ckpt, route(t.spec, t.ckpt), out);
    return std::pair{double(element_as_f32(out, 0)), double(element_as_f32(out, 1))};
  };
  HostContractKernel plain;
  HostContractKernel aiter_like(HostContractKernel::kDefaultFlopBudget, nullptr,
                                {text("token_scale_form=qmax_reciprocal,group_scale_form=qmax_reciprocal"),
                                 text("token_scale_form=qmax_reciprocal,group_scale_form=qmax_reciprocal")},
                                "aiter-like");
  for (ActFormat act : {ActFormat::fp8_token, ActFormat::fp8_group128}) {
    for (const auto& [contract, want] : {std::pair{"default", 55.125},
                                         std::pair{"token_scale_form=qmax_reciprocal,group_scale_form=qmax_reciprocal",
                                                   51.1875}}) {
      const auto [a, b] = out_of(scale_form_case(contract, act), plain);
      EXPECT_NEAR(a, want, 1e-6 * want) << contract << " " << name(act);
      EXPECT_NEAR(b, want, 1e-6 * want) << contract << " " << name(act);
    }
    const auto [a, b] = out_of(scale_form_case("default", act), aiter_like);
    EXPECT_NEAR(a, 51.1875, 1e-6 * 51.1875) << name(act);
    EXPECT_NEAR(b, 51.1875, 1e-6 * 51.1875) << name(act);
  }
}

}  // namespace
}  // namespace moe
