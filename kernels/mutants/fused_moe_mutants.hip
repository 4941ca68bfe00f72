// The GPU kernels' mutant build: kernels/moe/fused_moe.hip compiled a second time with the mutant catalog
// (kernels/mutants/mutation_id.hpp) in it, as launch_fused_moe_mutant. Its kernels have internal linkage, so they
// sit beside the default build's without sharing a symbol; the default build's kernels carry no mutant code.
#define MOE_GPU_MUTANTS 1
#include "kernels/moe/fused_moe.hip"
