// The grouped path's few-token stages for quantized weights on matrix instructions (kernels/moe/mma_decode.hip, a
// translation unit of its own, not compiled into the mutant build). Called by launch_fused_moe for
// StagePath::grouped_mma_decode (kernels/gpu/dispatch_plan.cpp says when).
#pragma once
#include <cstdint>

#include "kernels/moe/fused_moe.hpp"

namespace moe::gpu {

// Whether this build has them: NVIDIA (mma.sync bf16, sm_80 and later). On AMD not written yet (MFMA needs its own
// fragment layouts, validated on a gfx942/gfx950 runner): false there.
bool decode_mma_built();

// Stage 1 or 2 of the grouped path for every listed set, after the sort kernels filled expert_offsets,
// sorted_slots and active_sets. Stage 1 reads its inputs from xq_routed / xq_shared, which the launcher filled
// (prepare_inputs_kernel, then quantize_rows_kernel where the case quantizes); stage 2 reads mid. Each of them is
// rewritten in place into the operand layout first (split_rows_kernel in mma_decode.hip): after a stage the buffer
// it read holds bf16 pairs, not fp32.
void launch_decode_mma(const FusedMoeArgs& a, int stage, std::int64_t mid_stride, int sets, unsigned grid_sets);

}  // namespace moe::gpu
