// The GPU adapter's share of the mutant build (GpuFusedMoeKernel(Mutation), `selftest --kernel gpu`): what the
// mutant kernels read for the in-kernel mutants, passed beside their arguments (kernels/mutants/gpu_mutant_launch.hpp). The adapter calls it on its mutant path only; the default
// build's runs never reach it. The input/output mutants need none of it: MutantKernel (kernels/mutants) applies
// them around the mutant build without a bug.
#pragma once
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "fixtures/tensor.hpp"
#include "kernels/moe/fused_moe.hpp"
#include "kernels/mutants/mutation.hpp"
#include "reference/routing/routing.hpp"

namespace moe::gpu {

// The bug the mutant kernels carry on this case and what they need to know of it.
MutantLaunch mutant_launch(Mutation m, const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r);

}  // namespace moe::gpu
