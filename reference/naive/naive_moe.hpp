// An independent, deliberately plain fp64 implementation of the MoE contract: its own routing, its own weight
// decoding and scale indexing, its own activation quantization, its own loops, no Eigen, no grouping. Written
// separately from reference/moe and linked only by tests and the benchmark's baseline; it shares nothing with the
// engine but the element codecs (formats/), which have their own spec tests.
#pragma once
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"

namespace moe::naive {

struct NaiveRouting {
  std::vector<int> ids;          // [T, k]
  std::vector<double> weights;   // [T, k]
};

NaiveRouting route(const ProblemSpec& s, const Checkpoint& c);

// contract == true: the kernel contract's rounding points; false: the ideal reference.
std::vector<double> moe(const ProblemSpec& s, const Checkpoint& c, const NaiveRouting& r, bool contract);

}  // namespace moe::naive
