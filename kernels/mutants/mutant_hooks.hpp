// The mutant catalog's hooks in the GPU kernels. kernels/mutants/fused_moe_mutants.hip defines MOE_GPU_MUTANTS and
// compiles kernels/moe/fused_moe.hip again: there MOE_MUT(args, m) tests the bug the launch carries; in the default
// build every MOE_MUT(...) is the constant false and its code is gone.
#pragma once
#include "kernels/mutants/mutation_id.hpp"

#ifdef MOE_GPU_MUTANTS
#define MOE_MUT(args, m) ((args).mutation == int(::moe::Mutation::m))
#define MOE_LAUNCH_FUSED_MOE launch_fused_moe_mutant
#else
#define MOE_MUT(args, m) false
#define MOE_LAUNCH_FUSED_MOE launch_fused_moe
#endif
