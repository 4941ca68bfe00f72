// The requantization band's explanation test, its arithmetic (docs/judging.md "The band's explanation test"): a
// band token's error vector e = out - contract (f64, [H]) is fitted by least squares on basis columns, each the
// output change of one thing a correct kernel may legitimately do differently from the reference (one code of the
// requantized intermediate flipping by a step, one group's scale moving), with each coefficient bounded (a flip is
// one step, not five); what the columns cannot explain, ||e - B c||, is compared with the contract's own noise.
// The columns come from reference/moe/band_explain.hpp; this file knows nothing about where they come from.
#pragma once
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/moe/band_explanation.hpp"

namespace moe {

// One basis column: what it is (for the details) and its coefficient's bound (|c| <= bound).
struct BandColumn {
  std::string what;  // "slot 2 (expert 17) element 40: code step -0.03125"
  double bound = kExplainMaxSteps;
  int group = -1;    // >= 0: a scale scenario of that (slot, group); at most one per group is used
};

struct BandColumns {
  Eigen::MatrixXd b;            // [H, m] in output units
  std::vector<BandColumn> col;  // m
  // The contract noise of this token, [H] variances: the output dtype's rounding on both sides (u^2 / 6 per element,
  // u the ulp at the reference's value: two independent roundings, each uniform over one ulp), the slot and reduce
  // rounding points where the contract has them, and the declared GEMM2 accumulation error.
  Eigen::VectorXd noise_var;
};

// Fits e on cols (the scale scenarios chosen greedily, at most one per group) with bounded coefficients.
BandExplanation fit_band_error(const BandColumns& cols, const Eigen::VectorXd& e);

}  // namespace moe
