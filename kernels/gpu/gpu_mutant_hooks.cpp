#include "kernels/gpu/gpu_mutant_hooks.hpp"

namespace moe::gpu {

MutantLaunch mutant_launch(Mutation m, const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r) {
  MutantLaunch l;
  // A fault mutant is live on the trigger case only; elsewhere the mutant build runs without a bug.
  l.mutation = int(fault_mutant(m) && !mutation_applies(m, p) ? Mutation::none : m);
  if (m == Mutation::e8m0_scale_off_by_one) l.expert = first_hit_local_expert(p, r);
  if (m == Mutation::per_tensor_act_scale) l.tensor_scale = per_tensor_act_scale(p, c);
  // The rows x's allocation holds: T for a case's own x, more for a token probe's (its padding rows past T), which
  // the device copy holds too (gpu_case_buffers.hpp).
  if (m == Mutation::reads_past_device_x && !c.x.empty() && c.x.nbytes() > 0)
    l.x_rows = std::int64_t(c.x.capacity() / (c.x.nbytes() / std::size_t(c.x.dim(0))));
  return l;
}

}  // namespace moe::gpu
