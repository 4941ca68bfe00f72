// What a case says about how it is judged, in the verdict's words: its tier and its tolerance override (the case
// model, harness/case/case_spec.hpp, holds them; verdict/thresholds.hpp applies them).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace moe {

enum class Tier : std::uint8_t {
  statistical,  // realistic random inputs, per-token thresholds
  exact,        // dyadic inputs and power-of-two scales: the kernel must equal the contract reference bit for bit
};

struct ToleranceOverride {
  std::optional<double> min_cos, max_rel, atol, rtol, max_mismatch_fraction;
  std::string reason;  // required when any value is looser than the scheme's default
};

}  // namespace moe
