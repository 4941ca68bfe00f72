// Routing on the device for a problem's checkpoint (logits and correction bias uploaded), returned to the host.
// GPU builds only. Precomputed routing has nothing to compute and is rejected.
#pragma once
#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "reference/routing/routing.hpp"

namespace moe {

RoutingResult gpu_route(const ProblemSpec& p, const Checkpoint& c);

}  // namespace moe
