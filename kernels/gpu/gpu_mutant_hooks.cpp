#include "kernels/gpu/gpu_mutant_hooks.hpp"

namespace moe::gpu {

void mark_mutation(FusedMoeArgs& a, Mutation m, const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r) {
  // A fault mutant is live on the trigger case only; elsewhere the mutant build runs without a bug.
  a.mutation = int(fault_mutant(m) && !mutation_applies(m, p) ? Mutation::none : m);
  if (m == Mutation::e8m0_scale_off_by_one) a.mut_expert = first_hit_local_expert(p, r);
  if (m == Mutation::per_tensor_act_scale) a.mut_tensor_scale = per_tensor_act_scale(p, c);
}

}  // namespace moe::gpu
