// What the requantization band's explanation test found for one token (reference/moe/band_fit.hpp computes it,
// verdict/judge.hpp consumes it); no Eigen here, so the verdict's headers need none.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace moe {

// A residual above this many times the contract noise is not a requantization difference: an explained token's
// residual is the difference of two output roundings (its expected ratio is at most 1, see noise in BandColumns).
inline constexpr double kExplainMaxRatio = 3.0;
// A flip column is one code step; its coefficient may reach this many steps (one flip, with room for the
// linearisation of the slot and output roundings), never more.
inline constexpr double kExplainMaxSteps = 1.5;

// What the test found for one token. explained: ratio = ||e - B c|| / noise <= kExplainMaxRatio; a token that is not
// leaves the band. decisive = false: the m columns span so much of the H output dimensions that an error of this
// size in a random direction would be explained too (m >= H, or sqrt(1 - m / H) * ||e|| / noise <= kExplainMaxRatio):
// an explained token stays in the band, and the details say the test was not decisive for it.
struct BandExplanation {
  bool tested = false;
  bool decisive = true;
  bool explained = true;
  double ratio = 0, error_norm = 0, noise = 0;
  double max_coef = 0;  // the largest |c| in units of its column (a code step; a scenario; a scale ulp)
  std::int64_t flip_columns = 0, scale_columns = 0, hidden = 0;
  std::vector<std::string> used;  // the columns with a coefficient above 0.25 of a step, largest first (at most 4)
};

}  // namespace moe
