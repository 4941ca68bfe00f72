// SystematicInput::steps for a case (verdict/systematic.hpp): the requantization steps of its token-slots
// (reference/moe/band_explain.hpp slot_scale_steps), by which expert_partial and token_gain explain their largest
// components, for the kernel's verdict and the envelope's sparse members alike.
#pragma once
#include <cstdint>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "reference/routing/routing.hpp"
#include "verdict/systematic.hpp"

namespace moe {

// Whether a GEMM of p accumulates with fewer bits than fp32 (a declared accum=mmaN on an 8-bit GEMM, routed or
// shared): where the envelope simulates sparse members and the maxima explain requantization steps.
bool narrow_accumulation(const ProblemSpec& p);

// Empty where weights is nullptr (an exported reference) or every GEMM of p accumulates in fp32 (its error reaches no
// step worth the cost). rows: the case's token of each row of the judged output (empty: row t is token t). Each
// (token, slot) is computed once for the function's lifetime (copies share it); slot -1 gathers the token's routed
// and shared slots. p, weights and routing must outlive it. A step that cannot be computed (out of memory) explains
// nothing: the component keeps its z.
SystematicInput::SlotSteps case_slot_steps(const ProblemSpec& p, const Checkpoint* weights, const RoutingResult& routing,
                                           std::vector<std::int64_t> rows = {});

}  // namespace moe
