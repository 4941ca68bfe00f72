#include "kernels/gpu/gpu_mutant_hooks.hpp"

#include <cstring>

namespace moe::gpu {

void mutate_router_weights(Mutation m, const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r,
                           std::vector<float>& weights) {
  if (m != Mutation::routing_not_renormalized) return;
  for (std::int64_t tok = 0; tok < p.tokens; ++tok) {
    const float sum = selected_probability_sum(p, c, r, tok);
    for (int j = 0; j < r.k; ++j) weights[tok * r.k + j] *= sum;
  }
}

void mark_mutation(FusedMoeArgs& a, Mutation m, const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r) {
  // A fault mutant is live on the trigger case only; elsewhere the mutant build runs without a bug.
  a.mutation = int(fault_mutant(m) && !mutation_applies(m, p) ? Mutation::none : m);
  if (m == Mutation::e8m0_scale_off_by_one) a.mut_expert = first_hit_local_expert(p, r);
  if (m == Mutation::per_tensor_act_scale) a.mut_tensor_scale = per_tensor_act_scale(p, c);
  a.mut_routed_scaling = p.routing.routed_scaling;
}

void mutate_counted_slots(Mutation m, std::vector<char>& counted, int routed, int per) {
  if (m != Mutation::ep_sums_nonlocal && m != Mutation::shared_expert_dropped) return;
  for (std::size_t i = 0; i < counted.size(); ++i) {
    const bool shared = int(i % std::size_t(per)) >= routed;
    if (m == Mutation::ep_sums_nonlocal && !shared) counted[i] = 1;
    if (m == Mutation::shared_expert_dropped && shared) counted[i] = 0;
  }
}

void mutate_summed_output(Mutation m, Tensor& out, const Tensor& sentinel) {
  if (m != Mutation::last_token_unwritten || out.dim(0) == 0) return;
  const std::size_t row = out.nbytes() / std::size_t(out.dim(0)), last = out.nbytes() - row;
  std::memcpy(out.bytes() + last, sentinel.bytes() + last, row);
}

}  // namespace moe::gpu
