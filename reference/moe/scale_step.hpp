// One legitimate requantization step of a token-slot's intermediate (reference/moe/band_explain.hpp
// slot_scale_steps), as the systematic maxima weigh it (verdict/systematic_max.hpp explain_steps).
#pragma once
#include <vector>

namespace moe {

struct ScaleStep {
  int group = 0;         // the requantization group it moves; the steps of one group exclude each other
  double p = 0;          // its probability under the sparse members' GEMM error model (kSparseGemmScale)
  std::vector<double> d;  // the output change [H] it makes
  bool operator==(const ScaleStep&) const = default;
};

}  // namespace moe
