// The pristine check through the pipeline (docs/architecture.md "The data flow of one case", step 9): a bit written
// into the pristine tensors while the kernel runs is a harness error naming the tensor; the record keeps
// Checkpoint::fingerprint()'s value; weights lent by the weight cache come back with the seal their case verified.
#include <gtest/gtest.h>

#include <cstring>

#include "fixtures/content_seal.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/pipeline/weight_cache.hpp"
#include "kernels/host/host_contract_kernel.hpp"

namespace moe {
namespace {
// One case with every kind of tensor slot the cache keeps: weights, scales and biases.
Suite small_suite() {
  return load_suite_text(R"(suite: seal
defaults: {hidden: 128, inter: 128, experts: 8, topk: 2}
cases:
  - {tokens: 3, activation: swiglu_oai, biases: true, quant: {weight: fp8_channel, act: fp8_token}}
)", "seal.yaml");
}
}  // namespace

TEST(HostPipeline, OneBitWrittenIntoTheLastByteOfThePristineW2IsAHarnessError) {
  HostContractKernel k;
  DeviceDetection none;
  PipelineOptions opt;
  opt.after_kernel_hook = [](Checkpoint& pristine) {
    pristine.routed.w2.bytes()[pristine.routed.w2.nbytes() - 1] ^= std::byte{0x01};
  };
  const CaseRecord r = execute_case(small_suite().cases[0], k, none, opt);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_NE(r.reason.find("the pristine checkpoint's w2 changed"), std::string::npos) << r.reason;
}

TEST(HostPipeline, RecordedFingerprintIsTheCheckpointFingerprint) {
  // The record keeps hash_bytes' fingerprint (Checkpoint::fingerprint), so reports compare with earlier ones.
  HostContractKernel k;
  DeviceDetection none;
  const Suite s = small_suite();
  const CaseSpec& c = s.cases[0];
  const CaseRecord r = execute_case(c, k, none, {});
  EXPECT_EQ(r.fixture_fingerprint, pristine_checkpoint(c, case_problem(c, std::nullopt), nullptr).fingerprint());
}

TEST(WeightCache, WeightsComeBackWithTheSealTheirCaseVerified) {
  const Suite s = small_suite();
  const ProblemSpec p = case_problem(s.cases[0], std::nullopt);
  WeightCache cache;
  KnownSeals known;
  Checkpoint first = cache.checkpoint_for(p, &known);
  EXPECT_TRUE(known.empty());  // generated now: nothing proven yet
  const CheckpointSeal seal = seal_checkpoint(first);
  ASSERT_EQ(changed_since(first, seal), "");
  cache.give_back(p, std::move(first), &seal);
  const Checkpoint second = cache.checkpoint_for(p, &known);
  // Exactly the weights (the inputs are drawn again), with the values a fresh seal of them computes.
  const CheckpointSeal fresh = seal_checkpoint(second);
  std::vector<std::string> weights;
  for (const Tensor* t : second.tensors())
    if (t != &second.x && t != &second.router_logits) weights.push_back(t->name());
  ASSERT_FALSE(weights.empty());
  ASSERT_EQ(known.size(), weights.size());
  const KnownSeals want = known_seals(fresh, weights);
  for (const auto& [name, k] : want) {
    ASSERT_TRUE(known.count(name)) << name;
    EXPECT_EQ(known.at(name).fingerprint, k.fingerprint) << name;
    EXPECT_EQ(known.at(name).digest, k.digest) << name;
  }
  EXPECT_EQ(seal_checkpoint(second, known).fingerprint, second.fingerprint());
}

}  // namespace moe

namespace moe {
namespace {
// A call sequence's dirty output: the previous step's bytes repeated cyclically to the new size (12 bytes from 8).
TEST(DirtyOutput, FillsWithThePreviousOutputRepeated) {
  Tensor out("out", DType::bf16, {3, 2});
  std::vector<std::byte> previous;
  for (int i = 0; i < 8; ++i) previous.push_back(std::byte(i + 1));
  fill_dirty(out, previous);
  const std::uint8_t want[12] = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4};
  EXPECT_EQ(std::memcmp(out.bytes(), want, 12), 0);
  std::vector<std::byte> larger(20, std::byte(9));  // a larger previous output: its first 12 bytes
  fill_dirty(out, larger);
  for (std::size_t i = 0; i < 12; ++i) EXPECT_EQ(out.bytes()[i], std::byte(9));
}
}  // namespace
}  // namespace moe
