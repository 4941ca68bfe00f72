// A case's simulated envelope (verdict/envelope.hpp): the ensemble of perturbed contract references
// (reference/moe/ensemble.hpp) measured like kernel outputs against the contract reference, on the sampled tokens.
#pragma once
#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "reference/moe/reference_moe.hpp"
#include "reference/routing/routing.hpp"
#include "verdict/envelope.hpp"

namespace moe {

// contract, ideal: p's references [T, H]; slots: the contract's slot contributions [T, k, H] or empty.
Envelope simulate_envelope(const ProblemSpec& p, const Checkpoint& pristine, const RoutingResult& routing,
                           const Values& contract, const Values& ideal, const Values& slots);

}  // namespace moe
