// Dequantization of stored expert weights (the pristine checkpoint) into fp32 or fp64 rows: each value is
// decode(code) * its scale, the product a kernel's contract defines, formed in S (exact in fp64: a code has at most
// 4 significant bits and a scale 24; in fp32 it rounds once). Works on row ranges so that decode-sized
// problems stream through a cache-sized tile instead of materialising a whole expert.
#pragma once
#include <cstdint>

#include "fixtures/checkpoint.hpp"

namespace moe {

enum class WeightMatrix : std::uint8_t { w13, w2 };

// Rows [r0, r1), columns [c0, c1) of expert e's w13 ([2I, H]) or w2 ([H, I]) into out (row-major, stride c1 - c0).
// c0 must be 0 or a multiple of 128 (so block and MX scale boundaries stay aligned); c1 = -1 means K.
template <class S>
void dequantize_rows(const ExpertWeights& w, const QuantScheme& q, WeightMatrix which, std::int64_t e,
                     std::int64_t hidden, std::int64_t inter, std::int64_t r0, std::int64_t r1, S* out,
                     std::int64_t c0 = 0, std::int64_t c1 = -1);

}  // namespace moe
