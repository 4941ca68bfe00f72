// A one-token MoE whose output shows the fp8 quantizer's scale form (the contract points token_scale_form /
// group_scale_form), computed by hand in reference/tests/rounding_points_test.cpp: x = [0.6328125, 2.625] quantized
// per token or per 1 x 128 group, two experts with gate row [0, 32], up row [1, 0], W2 column [1, 1], router
// weights 0.75 / 0.25, intermediate and output f32. Both outputs are 55.125 where s = amax / qmax and 51.1875
// (within 2e-7 relative each way) where s = amax * fp32(1 / qmax).
#pragma once
#include "fixtures/checkpoint.hpp"
#include "fixtures/rounding_contract.hpp"
#include "formats/bf16.hpp"

namespace moe {

struct ScaleFormCase {
  ProblemSpec spec;
  Checkpoint ckpt;
};

inline ScaleFormCase scale_form_case(const char* contract, ActFormat act) {
  ScaleFormCase t;
  ProblemSpec& s = t.spec;
  s.hidden = 2; s.inter = 1; s.experts = 2; s.topk = 2; s.tokens = 1;
  s.routing.kind = RoutingKind::precomputed;
  s.intermediate = IntermediateDtype::f32;
  s.output_dtype = DType::f32;
  s.quant.act = act;
  s = with_contract(s, *parse_rounding_contract(contract).contract);
  Checkpoint& c = t.ckpt;
  c.x = Tensor("x", DType::bf16, {1, 2});
  c.x.span<std::uint16_t>()[0] = bf16_from_f32(0.6328125f);
  c.x.span<std::uint16_t>()[1] = bf16_from_f32(2.625f);
  c.router_logits = Tensor("router_logits", DType::f32, {1, 2});
  c.topk_ids = Tensor("topk_ids", DType::i32, {1, 2});
  c.topk_weights = Tensor("topk_weights", DType::f32, {1, 2});
  c.topk_ids.span<std::int32_t>()[0] = 0; c.topk_ids.span<std::int32_t>()[1] = 1;
  c.topk_weights.span<float>()[0] = 0.75f; c.topk_weights.span<float>()[1] = 0.25f;
  c.routed = allocate_experts(s.quant, 2, 2, 1, false, "");
  const float w13[4] = {0, 32, 1, 0};  // gate row, up row
  const float w2[2] = {1, 1};
  for (int e = 0; e < 2; ++e) quantize_expert_into(c.routed, s.quant, e, w13, w2, 2, 1);
  return t;
}

}  // namespace moe
