#include "kernels/gpu/gpu_mutant_hooks.hpp"

namespace moe::gpu {

MutantLaunch mutant_launch(Mutation m, const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r) {
  MutantLaunch l;
  // A fault mutant is live on the trigger case only; elsewhere the mutant build runs without a bug.
  l.mutation = int(fault_mutant(m) && !mutation_applies(m, p) ? Mutation::none : m);
  if (m == Mutation::e8m0_scale_off_by_one) l.expert = first_hit_local_expert(p, r);
  if (m == Mutation::per_tensor_act_scale) l.tensor_scale = per_tensor_act_scale(p, c);
  return l;
}

}  // namespace moe::gpu
