// Routers (docs/numerics.md "Routing"). All in fp32. Ties: the lower expert index wins (*policy*; no library documents
// its tie-break, so kernels are judged on the ids the reference produced).
#pragma once
#include <cstdint>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"

namespace moe {

struct RoutingResult {
  std::int64_t tokens = 0;
  int k = 0;
  std::vector<std::int32_t> ids;  // [T, k] global expert ids
  std::vector<float> weights;     // [T, k]
};

// p = softmax(logits); S = top-k(p); weights p_S, divided by sum_S p when renormalize.
RoutingResult softmax_topk(const float* logits, std::int64_t tokens, std::int64_t experts, int k, bool renormalize);

// DeepSeek-V3 noaux_tc: s = sigmoid(l); c = s + bias (selection only); a group's score is the sum of its top-2 c;
// the best topk_group groups are kept and the rest masked with -inf (masking with 0 is a known bug: a kept group
// whose c are negative would then lose to a dropped one); S = top-k(c); weights s_S, renormalized by
// (sum + 1e-20) when asked, times routed_scaling.
RoutingResult grouped_sigmoid_topk(const float* logits, const float* bias, std::int64_t tokens, std::int64_t experts,
                                   int k, int n_group, int topk_group, bool renormalize, float routed_scaling);

// Llama-4: top-1 by logit; the weight sigmoid(logit) scales the expert's input.
RoutingResult sigmoid_top1(const float* logits, std::int64_t tokens, std::int64_t experts);

// The routing the problem declares, on the checkpoint's logits (or its precomputed ids and weights).
RoutingResult route(const ProblemSpec& spec, const Checkpoint& ckpt);

}  // namespace moe
