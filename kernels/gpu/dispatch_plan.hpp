// Which GPU kernels a case runs: one plan per case, made before anything is uploaded, that the launcher executes
// (kernels/moe/fused_moe.hpp: launch_fused_moe takes each LaunchPlan) and the adapter reports (variant), so the
// report names the kernels that ran. Every dispatch rule lives in plan(). Plain host code (no GPU header), compiled
// and unit-tested in every build (kernels/tests/grouped_dispatch_test.cpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "fixtures/problem.hpp"
#include "kernels/gpu/dispatch_options.hpp"
#include "kernels/moe/fused_moe.hpp"

namespace moe::gpu {

// The matrix-instruction kernels a build has: on NVIDIA both (grouped_mma_built, decode_mma_built); none on AMD
// (not written yet) nor in the mutant build (the mutants live in the other kernels).
struct BuildCaps {
  bool grouped_mma = false;
  bool decode_mma = false;
};

struct Plan {
  // One launch, or two for shared experts on a separate path: the routed experts, then the shared ones, each into
  // its own output (the harness side adds them: kernels/common/output_sums.hpp).
  std::vector<LaunchPlan> launches;
  // The rest of what the variant spells: the case's reduce mode and routed weight format, and its activation format
  // where any set quantizes activations.
  ReduceMode reduce = ReduceMode::fused_atomic;
  WeightFormat weight = WeightFormat::bf16;
  std::optional<ActFormat> quantized_act;
  bool separate_shared() const { return launches.size() == 2; }
};

// The rules, for each launch of case p:
//  - one-stage where the case asks for it (stage: one_stage) and its sets' inter fit the kernel's shared memory
//    (kOneStageMaxInter), unless activations are quantized (the intermediate is quantized between two stages);
//    `auto` is two-stage: one block per slot leaves most of the GPU idle at decode token counts (H200, 2026-11-30:
//    2.1 ms one-stage against 0.86 ms two-stage at T=16 on the Qwen3.5 TP4 shape);
//  - else grouped where H and every inter of the launch are multiples of the routed format's chunk width (whole
//    16-byte loads: chunk_width), else row-wise;
//  - grouped: 2 tokens per pass where the sets the grid lists (min(sets, slots)) hold at most two slots each on
//    average (decode: fewer accumulators, more warps, several loads in flight per lane), else 8, or 8 always with
//    options.tokens_per_pass = 8;
//  - grouped at 8 tokens per pass on matrix instructions (grouped_mma) where the build has them, options allow,
//    and the operands are exactly the 16-bit type the instructions multiply: bf16 or fp16 weights in every set, the
//    input and the intermediate in that type, no activation quantization, H and every inter a multiple of 32 (whole
//    k-tiles). The products are then exact and the sums fp32, as in the other kernels; only the order of the fp32
//    additions differs;
//  - grouped at 2 tokens per pass on matrix instructions (grouped_mma_decode) where the build has them, options
//    allow, fp8 (per tensor, channel or 128x128 block), MXFP8 or MXFP4 weights are in every set, and H and every
//    inter are multiples of 32; any input and intermediate type, activation quantization and router-weight
//    placement (the operands come from the prepared fp32 rows, split into bf16 hi + lo: mma_decode.hip).
Plan plan(const ProblemSpec& p, BuildCaps build, const DispatchOptions& options);

// The dispatch choices (--dispatch item lists, split_dispatch_choice's form) that give p a plan of its own over the
// run's switches `base`: "" (the rules) first, then each further choice whose variant differs from every earlier
// one. What `moe-harness tune` times for the GPU kernels.
std::vector<std::string> distinct_dispatch_choices(const ProblemSpec& p, BuildCaps build, const DispatchOptions& base);

// The report's variant, from the plan alone: PATH/REDUCE/WEIGHT[+ACT][/shared-separate:PATH], PATH one of
// one_stage, two_stage (row-wise), grouped-t2, grouped-t8, grouped-mma, grouped-mma-decode.
std::string variant(const Plan& plan);

}  // namespace moe::gpu
