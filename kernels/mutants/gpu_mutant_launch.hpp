// What a launch of the GPU kernels' mutant build carries (launch_fused_moe_mutant, `selftest --kernel gpu`): the bug
// and what it needs to know. Passed beside the kernels' arguments, never inside them: FusedMoeArgs and ExpertSet
// hold what a production launch holds, and the default build's kernels read nothing of this.
#pragma once
#include <cstdint>

namespace moe::gpu {

struct MutantLaunch {
  int mutation = 0;           // a moe::Mutation (kernels/mutants/mutation_id.hpp); 0: none
  std::int64_t expert = -1;   // e8m0_scale_off_by_one: the first local expert the routing hits
  float tensor_scale = 0.0f;  // per_tensor_act_scale: the one scale used for every token's routed input
  std::int64_t x_rows = 0;    // reads_past_device_x: the rows of x its allocation holds (T, or more past T)
};

}  // namespace moe::gpu
