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

// The problem's routing edge case applied to a routing, in place (docs/judging.md "Routing edge cases"). Each
// token's k slots keep their order; an edge that replaces an id takes the lowest id the rule allows that the token
// does not hold yet, so only duplicate_id ever repeats an id:
//   duplicate_id   every even token's slot 1 takes slot 0's id (weights unchanged): both slots count;
//   masked_ids     every token's last slot gets id -1 (no expert: it contributes nothing, its weight is ignored);
//                  the last token's every slot is masked, so its routed output is exactly 0;
//   one_expert     every token routes to the same experts: slot j to the rank's first local expert + j;
//   empty_experts  odd expert ids get no token: each is replaced by the lowest even id the token does not hold;
//   zero_weights   every token's last slot weighs exactly 0, and the first token's every slot;
//   ep_rank_empty  this EP rank's experts get no token: each local id is replaced by the lowest other rank's id
//                  the token does not hold.
void apply_routing_edge(const ProblemSpec& spec, RoutingResult& r);

// The routing the problem declares, on the checkpoint's logits (or its precomputed ids and weights), with its edge
// case applied.
RoutingResult route(const ProblemSpec& spec, const Checkpoint& ckpt);

}  // namespace moe
