// What the harness side adds up of a kernel's outputs, one definition for every kernel under test (the host
// contract kernel, the GPU adapter): the per_k reduce and the model's sum of a separate shared path. The reference
// engines keep their own (an oracle shares no code with what it judges).
#pragma once
#include <cstdint>
#include <vector>

#include "fixtures/problem.hpp"
#include "fixtures/tensor.hpp"
#include "reference/routing/routing.hpp"

namespace moe {

// The per_k reduce (ReduceMode::per_k): the kernel leaves one fp32 row per slot, slots[(t * per + j) * H + c] for
// token t's slot j < per; token t's output is 0 plus, in slot order, the rows `counted` admits
// (counted[t * per + j] != 0), rounded once to out's dtype. Every token is written (0 where no slot counts).
void sum_slots_in_order(const std::vector<float>& slots, int per, const std::vector<char>& counted, Tensor& out);

// Which slots count, in the kernel contract's slot layout: a token's first `routed` slots hold its top-k choices in
// order (routing.ids), counted where the expert is local to p's EP rank; the next `shared` hold the shared experts,
// always counted. [T * (routed + shared)].
std::vector<char> local_slots(const ProblemSpec& p, const RoutingResult& r, int routed, int shared);

// The model's sum of two outputs computed on separate paths (SharedPath::separate): the routed and the shared
// output each rounded to `out` (bf16, f16 or f32), added in fp32, the sum rounded again.
float separate_paths_sum(float routed, float shared, DType out);

// The same for two whole outputs a kernel wrote in the output dtype: out = separate_paths_sum(out, shared) element by
// element, except where either output still holds `sentinel` (an element its launch never wrote), which stays the
// sentinel. All three [T, H] in one dtype.
void add_separate_shared(Tensor& out, const Tensor& shared, const Tensor& sentinel);

}  // namespace moe
