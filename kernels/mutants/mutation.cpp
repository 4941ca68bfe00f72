#include "kernels/mutants/mutation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "formats/bf16.hpp"
#include "formats/fp16.hpp"
#include "formats/fp8.hpp"
#include "formats/weight_format.hpp"
#include "kernels/convert/fn_to_fnuz.hpp"

namespace moe {
namespace {
constexpr std::array<std::pair<Mutation, std::string_view>, 24> kNames{{
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
    {Mutation::offsets_32bit, "offsets_32bit"},
    {Mutation::illegal_memory_access, "illegal_memory_access"},
    {Mutation::spin_forever, "spin_forever"},
}};
// Which formats a format mutant applies to, read from the format table: E8M0 block scales, packed e2m1 elements,
// and e4m3fn codes with fp32 scales (the fn -> fnuz conversion doubles fp32 scales; MX scales are powers of two).
bool e8m0_scales(const QuantScheme& q) { return is_mx(weight_format_info(q.weight)); }
bool e2m1_elements(const QuantScheme& q) { return weight_format_info(q.weight).element == DType::e2m1x2; }
bool fn_codes_with_f32_scales(const QuantScheme& q) {
  const WeightFormatInfo& w = weight_format_info(q.weight);
  return stored_element(w, q.flavor) == DType::e4m3fn && w.scale == ScaleKind::f32;
}
}  // namespace

std::vector<Mutation> all_mutations() {
  std::vector<Mutation> v;
  for (auto& [m, n] : kNames) if (m != Mutation::none && !fault_mutant(m)) v.push_back(m);
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

bool exact_tier_only(Mutation m, bool gpu) {
  return m == Mutation::e8m0_scale_off_by_one || (gpu && m == Mutation::bf16_accumulation);
}
bool gpu_only(Mutation m) { return m == Mutation::offsets_32bit || fault_mutant(m); }
bool fault_mutant(Mutation m) { return m == Mutation::illegal_memory_access || m == Mutation::spin_forever; }

bool mutation_applies(Mutation m, const ProblemSpec& p) {
  const bool renorm_routing = p.routing.kind == RoutingKind::softmax_topk && p.routing.renormalize && p.topk > 1;
  switch (m) {
    case Mutation::none: return true;
    case Mutation::gate_up_swapped: return p.layout != GateUpLayout::interleaved;
    case Mutation::swiglu_chunked_split: return p.activation == Activation::swiglu_oai;
    case Mutation::swiglu_clamp_dropped: return p.activation == Activation::swiglu_oai;
    case Mutation::fnuz_scale_not_doubled:
    case Mutation::fnuz_neg_zero_kept: return fn_codes_with_f32_scales(p.quant);
    case Mutation::last_token_unwritten: return p.tokens > 1 && (p.tokens & (p.tokens - 1)) != 0;
    case Mutation::one_token_wrong_expert: return p.local_experts() > 1;
    case Mutation::router_weight_dropped:
    case Mutation::router_weight_twice: return true;
    case Mutation::routing_not_renormalized: return renorm_routing;
    case Mutation::routed_scaling_twice: return p.routing.kind == RoutingKind::grouped_sigmoid && p.routing.routed_scaling != 1.0f;
    case Mutation::per_tensor_act_scale: return p.quant.act == ActFormat::fp8_token && p.tokens > 1;
    case Mutation::e8m0_scale_off_by_one: return e8m0_scales(p.quant);
    case Mutation::fp4_nibbles_swapped: return e2m1_elements(p.quant);
    case Mutation::bf16_accumulation: return true;
    case Mutation::lost_atomic_update: return p.reduce == ReduceMode::fused_atomic && p.topk > 1;
    case Mutation::shared_expert_dropped: return p.n_shared > 0 && p.ep_rank == 0;
    case Mutation::shared_clamp_when_disabled:
      return p.n_shared > 0 && !p.clamp_shared && p.activation == Activation::swiglu_oai;
    case Mutation::ep_sums_nonlocal: return p.ep > 1;
    case Mutation::biases_dropped: return p.biases;
    case Mutation::illegal_memory_access:
    case Mutation::spin_forever: return p.seed == kFaultMutantSeed;
    case Mutation::offsets_32bit: {
      // Live when a weight tensor holds more elements than 32 bits index (routed w13 is the largest).
      const double w13 = double(p.local_experts()) * 2.0 * double(p.local_inter()) * double(p.hidden);
      return w13 > 4294967296.0;
    }
  }
  return false;
}

std::int64_t first_hit_local_expert(const ProblemSpec& p, const RoutingResult& r) {
  const std::int64_t first = p.first_local_expert(), local = p.local_experts();
  for (std::int32_t id : r.ids)
    if (id >= first && id < first + local) return id - first;
  return -1;
}

float per_tensor_act_scale(const ProblemSpec& p, const Checkpoint& c) {
  float amax = 0.0f;
  const auto x = c.x.span<std::uint16_t>();
  for (std::uint16_t b : x) amax = std::max(amax, std::fabs(p.input_dtype == DType::bf16 ? bf16_to_f32(b) : fp16_to_f32(b)));
  return std::max(amax, p.quant.act_amax_floor) / (p.quant.act_qmax > 0 ? p.quant.act_qmax : e4m3_max(p.quant.flavor));
}

float selected_probability_sum(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r, std::int64_t tok) {
  const float* l = c.router_logits.span<float>().data() + tok * p.experts;
  const float m = *std::max_element(l, l + p.experts);
  float z = 0.0f, sel = 0.0f;
  for (std::int64_t e = 0; e < p.experts; ++e) z += std::exp(l[e] - m);
  for (int j = 0; j < r.k; ++j) sel += std::exp(l[r.ids[tok * r.k + j]] - m);
  return sel / z;
}

void apply_fnuz_conversion_mutant(Mutation m, Checkpoint& c) {
  if ((m != Mutation::fnuz_scale_not_doubled && m != Mutation::fnuz_neg_zero_kept) || c.routed.w13.dtype() != DType::e4m3fn)
    return;
  for (auto [w, s] : {std::pair{&c.routed.w13, &c.routed.w13_scale}, std::pair{&c.routed.w2, &c.routed.w2_scale}}) {
    std::vector<std::size_t> neg_zero;
    auto bytes = w->span<std::uint8_t>();
    for (std::size_t i = 0; i < bytes.size(); ++i) if (bytes[i] == 0x80) neg_zero.push_back(i);
    Tensor* scales[] = {s};
    convert_fn_to_fnuz_in_place(*w, scales);
    if (m == Mutation::fnuz_scale_not_doubled)
      for (float& v : s->span<float>()) v *= 0.5f;
    if (m == Mutation::fnuz_neg_zero_kept)
      for (std::size_t i : neg_zero) w->span<std::uint8_t>()[i] = 0x80;
  }
}

}  // namespace moe
