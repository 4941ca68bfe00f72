// The case in the launcher's plain types (kernels/moe/fused_moe.hpp), without any buffer: what the dispatch plan
// reads and what the adapter fills with device pointers, built one way for both. Plain host code (no GPU header),
// compiled in every build.
#pragma once
#include "fixtures/problem.hpp"
#include "kernels/moe/fused_moe.hpp"

namespace moe::gpu {

// The case's input, intermediate and output types as the launcher's DType (bf16, f16, f32; any other dtype is a
// harness error: no kernel input or output).
DType io_dtype(DType d);
DType io_dtype(IntermediateDtype d);

// Sizes, types, activation, reduce mode and both expert sets' formats and activation quantization of case p, with
// the routed top-k of its routing and the shared experts on EP rank 0 only. Left to the adapter: every pointer and
// each set's `fnuz`, which the working tensors say (a converter in prepare() may change the stored flavour).
FusedMoeArgs case_args(const ProblemSpec& p);

// One launch's arguments from the whole case's: the sets it covers (a separate shared launch runs the shared set as
// its only one: top-k 0, no local experts, the shared set in the routed set's place) and its reduce mode.
FusedMoeArgs launch_args(const FusedMoeArgs& whole, const LaunchPlan& launch);

}  // namespace moe::gpu
