#include "kernels/mutants/mutation.hpp"

#include <array>
#include <utility>

namespace moe {
namespace {
constexpr std::array<std::pair<Mutation, std::string_view>, 21> kNames{{
    {Mutation::none, "none"},
    {Mutation::gate_up_swapped, "gate_up_swapped"},
    {Mutation::swiglu_chunked_split, "swiglu_chunked_split"},
    {Mutation::swiglu_clamp_dropped, "swiglu_clamp_dropped"},
    {Mutation::fnuz_scale_not_doubled, "fnuz_scale_not_doubled"},
    {Mutation::fnuz_neg_zero_kept, "fnuz_neg_zero_kept"},
    {Mutation::last_token_unwritten, "last_token_unwritten"},
    {Mutation::one_token_wrong_expert, "one_token_wrong_expert"},
    {Mutation::router_weight_dropped, "router_weight_dropped"},
    {Mutation::router_weight_twice, "router_weight_twice"},
    {Mutation::routing_not_renormalized, "routing_not_renormalized"},
    {Mutation::routed_scaling_twice, "routed_scaling_twice"},
    {Mutation::per_tensor_act_scale, "per_tensor_act_scale"},
    {Mutation::e8m0_scale_off_by_one, "e8m0_scale_off_by_one"},
    {Mutation::fp4_nibbles_swapped, "fp4_nibbles_swapped"},
    {Mutation::bf16_accumulation, "bf16_accumulation"},
    {Mutation::lost_atomic_update, "lost_atomic_update"},
    {Mutation::shared_expert_dropped, "shared_expert_dropped"},
    {Mutation::shared_clamp_when_disabled, "shared_clamp_when_disabled"},
    {Mutation::ep_sums_nonlocal, "ep_sums_nonlocal"},
    {Mutation::biases_dropped, "biases_dropped"},
}};
bool mx(const QuantScheme& q) { return q.weight == WeightFormat::mxfp8 || q.weight == WeightFormat::mxfp4; }
bool fp8_weights(const QuantScheme& q) {
  return q.weight == WeightFormat::fp8_tensor || q.weight == WeightFormat::fp8_channel || q.weight == WeightFormat::fp8_block;
}
}  // namespace

std::vector<Mutation> all_mutations() {
  std::vector<Mutation> v;
  for (auto& [m, n] : kNames) if (m != Mutation::none) v.push_back(m);
  return v;
}
std::string_view mutation_name(Mutation m) {
  for (auto& [x, n] : kNames) if (x == m) return n;
  return "?";
}
std::optional<Mutation> parse_mutation(std::string_view s) {
  for (auto& [x, n] : kNames) if (n == s) return x;
  return std::nullopt;
}
std::string mutation_names() {
  std::string s;
  for (auto& [m, n] : kNames) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

bool exact_tier_only(Mutation m) { return m == Mutation::e8m0_scale_off_by_one; }

bool mutation_applies(Mutation m, const ProblemSpec& p) {
  const bool renorm_routing = p.routing.kind == RoutingKind::softmax_topk && p.routing.renormalize && p.topk > 1;
  switch (m) {
    case Mutation::none: return true;
    case Mutation::gate_up_swapped: return p.layout != GateUpLayout::interleaved;
    case Mutation::swiglu_chunked_split: return p.activation == Activation::swiglu_oai;
    case Mutation::swiglu_clamp_dropped: return p.activation == Activation::swiglu_oai;
    case Mutation::fnuz_scale_not_doubled:
    case Mutation::fnuz_neg_zero_kept: return fp8_weights(p.quant) && p.quant.flavor == Fp8Flavor::fn;
    case Mutation::last_token_unwritten: return p.tokens > 1 && (p.tokens & (p.tokens - 1)) != 0;
    case Mutation::one_token_wrong_expert: return p.local_experts() > 1;
    case Mutation::router_weight_dropped:
    case Mutation::router_weight_twice: return true;
    case Mutation::routing_not_renormalized: return renorm_routing;
    case Mutation::routed_scaling_twice: return p.routing.kind == RoutingKind::grouped_sigmoid && p.routing.routed_scaling != 1.0f;
    case Mutation::per_tensor_act_scale: return p.quant.act == ActFormat::fp8_token && p.tokens > 1;
    case Mutation::e8m0_scale_off_by_one: return mx(p.quant);
    case Mutation::fp4_nibbles_swapped: return p.quant.weight == WeightFormat::mxfp4;
    case Mutation::bf16_accumulation: return true;
    case Mutation::lost_atomic_update: return p.reduce == ReduceMode::fused_atomic && p.topk > 1;
    case Mutation::shared_expert_dropped: return p.n_shared > 0 && p.ep_rank == 0;
    case Mutation::shared_clamp_when_disabled:
      return p.n_shared > 0 && !p.clamp_shared && p.activation == Activation::swiglu_oai;
    case Mutation::ep_sums_nonlocal: return p.ep > 1;
    case Mutation::biases_dropped: return p.biases;
  }
  return false;
}

}  // namespace moe
