// Device routing (kernels/moe/routing.hip): softmax top-k (optionally renormalized), DeepSeek grouped sigmoid top-k
// with correction bias, groups and scaling, Llama-4 sigmoid top-1. fp32 throughout; ties go to the lower expert
// index, as in the reference. Plain types so host code includes it without a GPU header.
#pragma once
#include <cstdint>

namespace moe::gpu {

enum class RoutingMode : int { softmax_topk = 0, grouped_sigmoid = 1, sigmoid_top1 = 2 };

struct RoutingArgs {
  RoutingMode mode = RoutingMode::softmax_topk;
  std::int64_t tokens = 0;
  int experts = 0, topk = 1, n_group = 1, topk_group = 1;
  bool renormalize = true;
  float routed_scaling = 1.0f;
  const float* logits = nullptr;  // [T, E]
  const float* bias = nullptr;    // [E] (grouped)
  std::int32_t* ids = nullptr;    // [T, k]
  float* weights = nullptr;       // [T, k]
};

void launch_routing(const RoutingArgs& a);  // checks the launch (throws moe::Error); experts <= 1024

}  // namespace moe::gpu
