#include "reference/routing/routing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace moe {

TEST(SoftmaxTopk, HandComputedWithAndWithoutRenormalize) {
  // softmax([1, 2, 3, 0]): top-2 = {2, 1}; p = e^3/S, e^2/S with S = e + e^2 + e^3 + 1;
  // renormalized the pair is {sigmoid(1), sigmoid(-1)} = {0.7310585786, 0.2689414214}.
  const float l[4] = {1, 2, 3, 0};
  auto r = softmax_topk(l, 1, 4, 2, true);
  EXPECT_EQ(r.ids, (std::vector<std::int32_t>{2, 1}));
  EXPECT_NEAR(r.weights[0], 0.7310585786f, 1e-6);
  EXPECT_NEAR(r.weights[1], 0.2689414214f, 1e-6);
  auto n = softmax_topk(l, 1, 4, 2, false);
  EXPECT_NEAR(n.weights[0], 0.6439142598f, 1e-6);
  EXPECT_NEAR(n.weights[1], 0.2368828181f, 1e-6);
}

TEST(SoftmaxTopk, TiesGoToTheLowerExpertIndex) {
  const float l[4] = {1, 5, 5, 0};
  EXPECT_EQ(softmax_topk(l, 1, 4, 1, true).ids, (std::vector<std::int32_t>{1}));
  EXPECT_EQ(softmax_topk(l, 1, 4, 2, true).ids, (std::vector<std::int32_t>{1, 2}));
  const float z[3] = {0, 0, 0};
  EXPECT_EQ(softmax_topk(z, 1, 3, 2, true).ids, (std::vector<std::int32_t>{0, 1}));
}

namespace {
// The known bug, written out here only to prove the case below discriminates: dropped groups masked with 0.
std::vector<int> grouped_with_zero_mask(const std::vector<float>& c, int per, std::vector<int> kept, int k) {
  std::vector<float> m(c.size(), 0.0f);
  for (int g : kept) for (int i = g * per; i < (g + 1) * per; ++i) m[i] = c[i];
  std::vector<int> ids;
  std::vector<bool> used(c.size());
  for (int j = 0; j < k; ++j) {
    int b = -1;
    for (int i = 0; i < int(c.size()); ++i) if (!used[i] && (b < 0 || m[i] > m[b])) b = i;
    used[b] = true;
    ids.push_back(b);
  }
  return ids;
}
}  // namespace

TEST(GroupedSigmoidTopk, DroppedGroupsMaskedWithMinusInf_ZeroMaskWouldChooseDifferently) {
  // 8 experts in 4 groups of 2; logits 0 -> s = 0.5; c = s + bias =
  // [0.9, 0.9 | -0.1, -0.1 | -0.3, -0.3 | -0.4, -0.4]; group scores (sum of top-2) 1.8, -0.2, -0.6, -0.8.
  // topk_group 2 keeps groups 0 and 1; top-3 over the kept experts = {0, 1, 2}. With 0-masking, expert 4 (c masked
  // to 0 > -0.1) would beat expert 2.
  const float logits[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const float bias[8] = {0.4f, 0.4f, -0.6f, -0.6f, -0.8f, -0.8f, -0.9f, -0.9f};
  auto r = grouped_sigmoid_topk(logits, bias, 1, 8, 3, 4, 2, true, 2.5f);
  EXPECT_EQ(r.ids, (std::vector<std::int32_t>{0, 1, 2}));
  // Weights come from s (0.5 each), not the biased c: 0.5 / 1.5 * 2.5.
  for (float w : r.weights) EXPECT_NEAR(w, 2.5f / 3.0f, 1e-6);
  std::vector<float> c(8);
  for (int i = 0; i < 8; ++i) c[i] = 0.5f + bias[i];
  EXPECT_EQ(grouped_with_zero_mask(c, 2, {0, 1}, 3), (std::vector<int>{0, 1, 4}));
}

TEST(GroupedSigmoidTopk, NoRenormalizeKeepsSigmoidTimesScaling) {
  const float logits[4] = {2.0f, -1.0f, 0.0f, 1.0f};
  const float bias[4] = {0, 0, 0, 0};
  auto r = grouped_sigmoid_topk(logits, bias, 1, 4, 2, 1, 1, false, 2.0f);
  EXPECT_EQ(r.ids, (std::vector<std::int32_t>{0, 3}));
  EXPECT_NEAR(r.weights[0], 2.0f * 0.8807970780f, 1e-6);
  EXPECT_NEAR(r.weights[1], 2.0f * 0.7310585786f, 1e-6);
}

TEST(SigmoidTop1, Llama4PicksMaxLogitWeightIsSigmoid) {
  const float l[3] = {0.5f, -1.0f, 2.0f};
  auto r = sigmoid_top1(l, 1, 3);
  EXPECT_EQ(r.ids, (std::vector<std::int32_t>{2}));
  EXPECT_NEAR(r.weights[0], 0.8807970780f, 1e-7);
}

}  // namespace moe
