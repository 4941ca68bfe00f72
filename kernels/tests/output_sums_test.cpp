// The harness side's sums of kernel outputs (kernels/common/output_sums.hpp), against values worked out by hand.
#include <gtest/gtest.h>

#include <cstring>

#include "kernels/common/output_sums.hpp"
#include "formats/bf16.hpp"
#include "fixtures/tensor_element.hpp"

namespace moe {
namespace {

// Separate paths round twice: 1 + 2^-8 is a bf16 tie that rounds to even (1.0), and 1.0 + 2^-8 again; the fused
// sum 1 + 2^-7 would be exact. In f32 the sum is exact either way.
TEST(OutputSums, SeparatePathsRoundEachOutputThenTheSum) {
  const float routed = 1.0f + 0x1p-8f, shared = 0x1p-8f;
  EXPECT_EQ(separate_paths_sum(routed, shared, DType::bf16), 1.0f);
  EXPECT_EQ(separate_paths_sum(routed, shared, DType::f32), 1.0f + 0x1p-7f);
  // f16 has 10 fraction bits: 1 + 2^-11 ties to 1.0, then 1.0 + 2^-11 ties to 1.0 again.
  EXPECT_EQ(separate_paths_sum(1.0f + 0x1p-11f, 0x1p-11f, DType::f16), 1.0f);
}

TEST(OutputSums, AddingTheSharedOutputKeepsTheSentinelWhereEitherPartIsUnwritten) {
  Tensor sentinel("sentinel", DType::bf16, {1, 3});
  for (auto& v : sentinel.span<std::uint16_t>()) v = 0x7FA5;
  Tensor out = sentinel.clone("out"), shared = sentinel.clone("shared");
  store_element(out, 0, 1.0f);
  store_element(out, 2, 2.0f);      // shared[2] unwritten
  store_element(shared, 0, 0.5f);
  store_element(shared, 1, 1.0f);   // out[1] unwritten
  add_separate_shared(out, shared, sentinel);
  EXPECT_EQ(element_as_f32(out, 0), 1.5f);
  EXPECT_EQ(out.span<std::uint16_t>()[1], 0x7FA5);
  EXPECT_EQ(out.span<std::uint16_t>()[2], 0x7FA5);
}

// In slot order from 0: (0 + 1e8) + 1 = 1e8 in fp32 (1 is below half an ulp of 1e8, 4), then - 1e8 = 0; summed in
// another order the 1 would survive. Slots the mask leaves out add nothing; a token with none is 0.
TEST(OutputSums, PerKSumsTheCountedSlotsInSlotOrder) {
  const int per = 3;
  Tensor out("out", DType::f32, {2, 1});
  const std::vector<float> slots = {1e8f, 1.0f, -1e8f, 5.0f, 7.0f, 11.0f};
  sum_slots_in_order(slots, per, {1, 1, 1, 0, 0, 0}, out);
  EXPECT_EQ(out.span<float>()[0], 0.0f);
  EXPECT_EQ(out.span<float>()[1], 0.0f);
  sum_slots_in_order(slots, per, {0, 1, 1, 1, 0, 1}, out);
  EXPECT_EQ(out.span<float>()[0], -1e8f);  // (0 + 1) - 1e8: the 1 is lost in the subtraction's rounding
  EXPECT_EQ(out.span<float>()[1], 16.0f);
}

// EP rank 1 of 2 over 8 experts holds experts 4..7: a routed slot counts where its expert is one of them, a shared
// slot always.
TEST(OutputSums, LocalSlotsAreTheRanksExpertsAndEveryShared) {
  ProblemSpec p;
  p.tokens = 2;
  p.experts = 8;
  p.topk = 2;
  p.ep = 2;
  p.ep_rank = 1;
  RoutingResult r{2, 2, {3, 4, 7, 0}, {0.5f, 0.5f, 0.5f, 0.5f}};
  EXPECT_EQ(local_slots(p, r, 2, 1), (std::vector<char>{0, 1, 1, 1, 0, 1}));
  EXPECT_EQ(local_slots(p, r, 2, 0), (std::vector<char>{0, 1, 1, 0}));
  EXPECT_EQ(local_slots(p, r, 0, 1), (std::vector<char>{1, 1}));
}

}  // namespace
}  // namespace moe
