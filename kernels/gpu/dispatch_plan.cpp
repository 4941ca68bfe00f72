#include "kernels/gpu/dispatch_plan.hpp"

#include <algorithm>

#include "fixtures/error.hpp"
#include "kernels/gpu/launch_args.hpp"

namespace moe::gpu {
namespace {

// bf16 / fp16 weights: unscaled 16-bit elements, the operands of the grouped_mma kernels as they are stored.
bool sixteen_bit(WeightFormat f) {
  return weight_format_info(f).element_bits == 16 && weight_format_info(f).scale == ScaleKind::none;
}

// Every row length of the launch (H, each set's inter) holds whole 16-byte chunks of the routed format.
bool whole_chunks(const FusedMoeArgs& a) {
  const int v = chunk_width(a.routed.wfmt);
  return a.hidden % v == 0 && a.routed.inter % v == 0 && (a.n_shared == 0 || a.shared.inter % v == 0);
}

int tokens_per_pass(const FusedMoeArgs& a, const DispatchOptions& o) {
  if (o.tokens_per_pass == 8) return 8;
  const std::int64_t slots = a.tokens * (a.topk + a.n_shared), sets = a.local_experts + a.n_shared;
  return slots <= 2 * std::min(slots, sets) ? 2 : 8;
}

// The matrix-instruction kernels' shared shape rules: every set in the routed format, H and every inter a
// multiple of 32.
bool mma_rows(const FusedMoeArgs& a) {
  return (a.n_shared == 0 || (a.shared.wfmt == a.routed.wfmt && a.shared.inter % 32 == 0)) && a.hidden % 32 == 0 &&
         a.routed.inter % 32 == 0;
}

// The 16-bit operands of the grouped_mma kernels are exact: the input and the intermediate in the weights' type.
bool exact_sixteen_bit_operands(const FusedMoeArgs& a) {
  const DType t = weight_format_info(a.routed.wfmt).element;
  return a.in_type == t && a.mid_type == t && !quantizes_activations(a);
}

StagePath stage_path(const FusedMoeArgs& a, bool one_stage, int tpp, BuildCaps build, const DispatchOptions& o) {
  if (one_stage) return StagePath::one_stage;
  if (!whole_chunks(a)) return StagePath::row_wise;
  const bool b16 = sixteen_bit(a.routed.wfmt);
  if (build.grouped_mma && o.grouped_mma && b16 && tpp == 8 && exact_sixteen_bit_operands(a) && mma_rows(a))
    return StagePath::grouped_mma;
  if (build.decode_mma && o.decode_mma && !b16 && tpp == 2 && mma_rows(a)) return StagePath::grouped_mma_decode;
  return StagePath::grouped;
}

std::string path_name(const LaunchPlan& l) {
  switch (l.path) {
    case StagePath::one_stage: return "one_stage";
    case StagePath::row_wise: return "two_stage";
    case StagePath::grouped: return "grouped-t" + std::to_string(l.tokens_per_pass);
    case StagePath::grouped_mma: return "grouped-mma";
    case StagePath::grouped_mma_decode: return "grouped-mma-decode";
  }
  throw_harness_error("variant", "unknown stage path");
}

}  // namespace

Plan plan(const ProblemSpec& p, BuildCaps build, const DispatchOptions& options) {
  const FusedMoeArgs whole = case_args(p);
  const bool quant = quantizes_activations(whole);
  const std::int64_t max_inter = std::max(p.local_inter(), p.n_shared ? p.local_shared_inter() : 0);
  const bool one_stage = p.stage == StageMode::one_stage && max_inter <= kOneStageMaxInter && !quant;
  Plan out;
  out.reduce = p.reduce;
  out.weight = p.quant.weight;
  if (quant) out.quantized_act = p.quant.act;
  const bool separate = p.shared_path == SharedPath::separate && whole.n_shared > 0;
  const std::vector<LaunchSets> sets = separate ? std::vector{LaunchSets::routed, LaunchSets::shared}
                                                : std::vector{LaunchSets::routed_and_shared};
  for (LaunchSets s : sets) {
    LaunchPlan l;
    l.sets = s;
    l.reduce = whole.reduce;
    const FusedMoeArgs a = launch_args(whole, l);
    const int tpp = tokens_per_pass(a, options);
    l.path = stage_path(a, one_stage, tpp, build, options);
    const bool grouped = l.path == StagePath::grouped || l.path == StagePath::grouped_mma ||
                         l.path == StagePath::grouped_mma_decode;
    l.tokens_per_pass = grouped ? tpp : 0;
    l.prepare_inputs = quantizes_activations(a) || l.path == StagePath::grouped_mma_decode;
    out.launches.push_back(l);
  }
  return out;
}

std::string variant(const Plan& plan) {
  if (plan.launches.empty() || plan.launches.size() > 2)
    throw_harness_error("variant", "a plan has one launch, or two with the shared experts on a separate path");
  std::string v = path_name(plan.launches[0]) + "/" + std::string(name(plan.reduce)) + "/" + std::string(name(plan.weight));
  if (plan.quantized_act) v += "+" + std::string(name(*plan.quantized_act));
  if (plan.separate_shared()) v += "/shared-separate:" + path_name(plan.launches[1]);
  return v;
}

std::vector<std::string> distinct_dispatch_choices(const ProblemSpec& p, BuildCaps build, const DispatchOptions& base) {
  std::vector<std::string> choices, variants;
  for (const char* c : {"", "grouped_tokens_per_pass=8", "grouped_mma=off", "decode_mma=off",
                        "grouped_tokens_per_pass=8,grouped_mma=off"}) {
    const std::string v = variant(plan(p, build, parse_dispatch_options(split_dispatch_choice(c), base)));
    if (std::find(variants.begin(), variants.end(), v) != variants.end()) continue;
    variants.push_back(v);
    choices.push_back(c);
  }
  return choices;
}

}  // namespace moe::gpu
