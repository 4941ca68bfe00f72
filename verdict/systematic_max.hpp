// The statistics that are the largest of many components (channel, expert, token_gain, expert_partial,
// channel_group: docs/judging.md "Systematic errors"). Each component's z is taken at the statistic's standard-error
// scale (StatisticRecord::se_scale); the statistic's z is the shown component's z corrected for the number of
// components (Sidak), so that on a correct kernel it is distributed as one test's |z| whatever the number of
// channels, experts, tokens or token-slots; and the RMS of the components' z (`spread`) is what the envelope's
// members measure to set the scale.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "reports/run_report.hpp"

namespace moe {

struct Component {
  double z;       // the component's own z at se_scale (before the correction)
  double effect;  // its effect size
  std::int64_t id;
};

// A standard error at a scale with a floor added in quadrature: what a maximum's component's z is taken with, and
// what the envelope fits the floor by (verdict/envelope.cpp).
inline double scaled_se(double se, double scale, double floor) {
  return floor > 0 ? std::sqrt(se * se * scale * scale + floor * floor) : se * scale;
}
// A component's standard error at its statistic's scale and floor (StatisticRecord::se_floor, 0 unless the envelope
// set one). A component without error variance keeps its se of 0 (its z NaN where it has no error either: left out,
// as without a floor).
inline double component_se(double se, const StatisticRecord& s) {
  return se > 0 ? scaled_se(se, s.se_scale, s.se_floor) : se * s.se_scale;
}

// The largest components whose effect a legitimate requantization step explains (SystematicInput::steps): for each
// component whose corrected z passes kExplainAbove (a null component's corrected z does with probability 0.27 %:
// below it the null's own spread is left whole), the largest effects first and at most kMaxExplained of them,
// `candidates(id)` gives the effects the steps of its token-slot (its token) would have on it; with b the one
// nearest its effect, where |effect - b| < |effect|, its z becomes z (effect - b) / effect (the same standard error:
// a step moves the slot's gain, not its residual). Its effect stays (the floor still judges the whole effect).
// Returns b per component (0: not explained). A z only falls, so a kernel that passes without the explanation
// passes with it.
inline constexpr double kExplainAbove = 3.0;
inline constexpr int kMaxExplained = 16;
std::vector<double> explain_steps(std::vector<Component>& components,
                                  const std::function<std::vector<double>(std::int64_t id)>& candidates);
// explain_steps' candidates for a component whose effect is the slope of the error on `onto` [h] (its token-slot's
// contribution, its token's reference row; rr = sum onto^2): each step's <d, onto> / rr.
std::vector<double> step_effects(const std::vector<std::vector<double>>& steps, const float* onto, std::int64_t h,
                                 double rr);
// The details' note for a shown component explain_steps explained ("" where it did not).
std::string step_note(double taken);

// Fills s.z (corrected for components.size() tests; one-sided for `channel`), s.effect, s.z_single, s.components and
// s.spread from the components, and returns the index of the one shown: a component that fails (its corrected z
// passes s.z_threshold and its effect s.effect_floor) if any, else the one closest to failing. -1 and s untouched
// when there are none.
std::int64_t pick_component(const std::vector<Component>& components, StatisticRecord& s);

}  // namespace moe
