// The grouped path's stages on matrix instructions (kernels/moe/mma_stages.hip, a translation unit of its own: it
// builds in parallel with fused_moe.hip and is not compiled again into the mutant build). Called by
// launch_fused_moe for StagePath::grouped_mma (kernels/gpu/dispatch_plan.cpp says when).
#pragma once
#include <cstdint>

#include "kernels/moe/fused_moe.hpp"

namespace moe::gpu {

// Whether this build has them: NVIDIA (wmma on bf16/fp16, sm_80 and later). On AMD they are not written yet (MFMA
// needs a version of its own, validated on a gfx942/gfx950 runner), and this returns false there.
bool grouped_mma_built();

// Stage 1 or 2 of the grouped path for every listed set, after the sort kernels filled expert_offsets,
// sorted_slots and active_sets. grid_sets = min(sets, slots), as for the other grouped kernels.
void launch_grouped_mma(const FusedMoeArgs& a, int stage, std::int64_t mid_stride, int sets, unsigned grid_sets);

}  // namespace moe::gpu
