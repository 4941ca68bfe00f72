// The GPU adapter's share of the mutant build (GpuFusedMoeKernel(Mutation), `selftest --kernel gpu`): the catalog's
// bugs that live on the host side of the kernels (the router weights handed in, the per_k sum) and the fields the
// mutant kernels read. The adapter calls these on its mutant path only; the default build's runs never reach them.
#pragma once
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "fixtures/tensor.hpp"
#include "kernels/moe/fused_moe.hpp"
#include "kernels/mutants/mutation.hpp"
#include "reference/routing/routing.hpp"

namespace moe::gpu {

// routing_not_renormalized (the routing kernel's bug): each token's weights left unnormalized.
void mutate_router_weights(Mutation m, const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r,
                           std::vector<float>& weights);
// The bug the mutant kernels carry and what they need to know of it (FusedMoeArgs::mutation, mut_*).
void mark_mutation(FusedMoeArgs& a, Mutation m, const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r);
// The per_k sum's bugs, before it (counted: local_slots' mask of `per` slots per token, the first `routed` routed):
// ep_sums_nonlocal counts other ranks' routed slots, shared_expert_dropped none of the shared ones.
void mutate_counted_slots(Mutation m, std::vector<char>& counted, int routed, int per);
// ... and after it: last_token_unwritten leaves the last token as the sentinel.
void mutate_summed_output(Mutation m, Tensor& out, const Tensor& sentinel);

}  // namespace moe::gpu
