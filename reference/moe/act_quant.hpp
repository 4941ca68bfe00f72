// The contract's rounding points for activations: rows become dequant(quant(rows)) exactly as the kernel contract
// declares them (per-token fp8 with its qmax, 1x128 groups, MXFP8 with its scale mode), and the stage-1
// intermediate is rounded to its declared dtype first.
#pragma once
#include <cstdint>

#include "fixtures/problem.hpp"

namespace moe {

template <class S>
void fake_quantize_activation_rows(S* rows, std::int64_t n, std::int64_t k, const QuantScheme& q);

template <class S>
void round_to_dtype(S* v, std::int64_t n, IntermediateDtype d);
template <class S>
void round_to_dtype(S* v, std::int64_t n, DType d);  // bf16, f16 or f32

}  // namespace moe
