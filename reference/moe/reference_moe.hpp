// The reference MoE engine (docs/numerics.md): tokens grouped per expert, one Eigen GEMM per expert and
// stage, OpenMP across experts; only experts that some token hits are dequantized, one at a time per thread, so
// working memory is bounded by a few experts, never an fp32 copy of the whole layer.
//
//  contract: activations and the stage-1 intermediate quantized and rounded exactly where the case's kernel
//            contract says (input quantization, intermediate dtype, intermediate quantization), fp32 (or fp64)
//            accumulation, output rounded to the output dtype. What a correct kernel computes up to summation order.
//  ideal:    the same stored weights, the unquantized input, no intermediate rounding, fp32 output: the recipe's
//            own quantization error (informational, or a loose gate).
//
// The contract's other rounding points (fixtures/rounding_contract.hpp), where the problem names them: the stage-1
// output before the activation, each slot's weighted output, the top-k sum's accumulator after each addition; the
// ideal reference rounds none. Reduction order is fixed (per token: routed slots in top-k order, then shared
// experts), so the result does not depend on thread count.
#pragma once
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "reference/moe/large_buffer.hpp"
#include "reference/routing/routing.hpp"

namespace moe {

enum class ReferenceKind : std::uint8_t { contract, ideal };
enum class Precision : std::uint8_t { fp32, fp64 };  // fp64: validation mode (all GEMMs and sums in double)

// [T, H] values (contract: already rounded to the output dtype). Reads `ckpt` only.
// LargeVector: no zero-fill and huge pages for the hundreds of MiB a prefill output can take.
using Values = LargeVector<float>;
// slots: when given, receives each routed slot's contribution to the sum [T, k, H] (its output with the router
// weight applied, after the slot rounding; 0 for a slot of another EP rank's expert): what each expert adds to each
// token, for the per-expert statistic (verdict/systematic.hpp).
Values reference_moe(const ProblemSpec& spec, const Checkpoint& ckpt, const RoutingResult& routing,
                     ReferenceKind kind, Precision precision = Precision::fp32, Values* slots = nullptr);

}  // namespace moe
