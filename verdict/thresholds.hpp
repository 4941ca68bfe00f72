// Default pass thresholds per quant scheme (docs/cli.md "Judging"). Calibrated on correct kernels over many
// seeds (results/calibration/README.md has the command and the committed output); a case may tighten them and may
// loosen them only with a written reason.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "fixtures/problem.hpp"  // ProblemSpec, SpecProblem
#include "verdict/tolerance.hpp"

namespace moe {

// The systematic-error checks (verdict/systematic.hpp, docs/judging.md "Systematic errors"): each statistic fails
// when its standardized value z passes z_* (a significance level) AND its effect size passes *_floor (a size no
// correct kernel's summation order reaches), so neither a tiny real bias of a huge case nor the noise of a tiny
// case fails on its own.
struct SystematicThresholds {
  bool on = true;               // statistical tier; the exact tier's bit equality already decides
  double gain_z = 6.0;          // |b - 1| / se: two-sided normal p = 2e-9 per case
  double gain_floor = 1e-3;     // |b - 1|: 0.1 %
  double channel_z = 7.0;       // one-sided normal p = 1.3e-12 per case (the largest channel, corrected for H)
  double channel_floor = 0.02;  // the channel's relative error over the tokens
  double rounding_z = 6.0;      // |mean| / se of the signed error in output ulps
  double rounding_floor = 0.1;  // |mean|, in output ulps (truncation toward zero: -0.5)
  double expert_z = 6.0;        // two-sided p = 2e-9 per case (the largest expert, corrected for their number)
  double expert_floor = 2e-3;   // |gain of the expert's tokens - gain of the others| (no slot contributions)
  double expert_own_floor = 5e-3;  // |the expert's own gain| (the regression on its slot contributions)
  double offset_z = 6.0;        // |mean error| / se: two-sided p = 2e-9 per case
  double offset_floor = 5e-4;   // |mean error| / mean |reference|
  double token_gain_z = 6.0;    // the largest |b_t - 1| / se_t corrected for T: two-sided p = 2e-9 per case
  // |b_t - 1|: above 2^-7 = 7.8e-3, one flipped bf16 rounding of a token's dominant element, and below 9.2e-3, the
  // smallest effect a 1 % token gain showed after rounding (docs/judging.md "token_gain").
  double token_gain_floor = 8.5e-3;
  double expert_partial_z = 6.0;   // the largest token-slot's |beta| / se, Sidak-corrected over the local slots
  double expert_partial_floor = 5e-2;  // |beta_tj|: above 2^-3 x 40 % of a slot's energy (one fp8 code flip)
  double slot_direction_z = 6.0;   // the mean sign of the token-slots' error projections / se (a sign test)
  double slot_direction_floor = 1e-3;  // |the pooled slope of the error on the slots|, as gain's floor
  double channel_group_z = 6.0;    // a channel group's |b - 1| / se, Sidak-corrected over the groups
  double channel_group_floor = 5e-3;   // |b_G - 1|: 1/8 of the channels x1.01 is twice it
  // Each statistic's standard-error scale, in kSystematicNames' order (verdict/systematic.hpp): every z, and every
  // component's z of a maximum, is divided by it. 1 unless the case's envelope measured a larger spread
  // (verdict/envelope.hpp): the element-wise standard errors assume independent errors, which intermediate roundings
  // carried through W2 and the matrix units' accumulation are not.
  std::array<double, 9> se_scale = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  // Each statistic's standard-error floor, in the same order, added in quadrature to every component's scaled
  // standard error of a two-sided maximum (expert, token_gain, expert_partial, channel_group): 0 unless the case's
  // envelope has sparse members (verdict/envelope.hpp), whose requantization steps move single token-slots and
  // experts by whole percent with almost no residual to see it by.
  std::array<double, 9> se_floor = {0, 0, 0, 0, 0, 0, 0, 0, 0};
};

// The requantization band's defaults on dynamic-activation schemes (docs/judging.md "The requantization band").
// Factor: a correct kernel that requantizes a token with another scale errs from the ideal by about the recipe's own
// quantization noise q_t, and so, by the triangle inequality, from the contract reference by at most about 2 q_t
// (||k - c|| <= ||k - ideal|| + ||ideal - c||; per element, two half-ulp roundings in opposite directions).
// Fraction: up to 1 token in 32 (at least one) may requantize with another scale; a kernel that skips or botches a
// requantization moves every token.
inline constexpr double kBandFactor = 2.0;
inline constexpr double kBandFraction = 1.0 / 32.0;
// The edge never exceeds this multiple of the case's max_rel, whatever q_t is: a token whose contract reference is
// nearly zero (q_t divided by a tiny norm) or whose ideal is not finite gives no licence for an unbounded error.
inline constexpr double kBandEdgeMaxRel = 2.0;
// How many of T tokens may be inside the band: max(1, ceil(fraction * T)).
inline std::int64_t requant_band_allowance(double fraction, std::int64_t tokens) {
  return std::max<std::int64_t>(1, std::int64_t(std::ceil(fraction * double(tokens))));
}

struct Thresholds {
  double min_cos = 0.0;                // every token's cosine must reach this
  double max_rel = 0.0;                // every token's ||o - r|| / max(||r||, rel_floor)
  double atol = 0.0, rtol = 0.0;       // element check |o - r| <= atol + rtol * |r| (relative to the REFERENCE)
  double max_mismatch_fraction = 0.0;  // fraction of elements allowed outside that band
  double rel_floor = 1e-6;             // denominator floor for tokens whose reference norm is ~0
  bool bitwise = false;                // exact tier: every element bit-equal to the contract reference
  // The requantization band (docs/judging.md "The requantization band"): with dynamic activation scales, a correct
  // kernel whose intermediate differs by its accumulation order can move a token's (or group's) amax across a
  // rounding and requantize every element of it with another scale. Such a token's error is bounded by the recipe's
  // own quantization noise there, q_t = ||ideal_t - contract_t|| / ||contract_t||. A token below min_cos whose rel
  // is at most band_factor * q_t is inside the band; up to max(1, ceil(band_fraction * T)) such tokens pass min_cos.
  // 0 switches the band off (schemes without dynamic activation scales, the exact tier).
  double band_factor = 0.0;
  double band_fraction = 0.0;
  // The allowance derived from the case's simulated envelope (verdict/envelope.hpp); -1: none was simulated, and
  // band_fraction decides.
  std::int64_t band_allowance = -1;
  // Whether the band also excuses its tokens' elements from max_mismatch_fraction (docs/judging.md "The element band
  // and the requantization band"): set by the envelope where its members, the declared contract's own legitimate
  // variation, put elements outside atol + rtol |r| (a contract whose variation never leaves the tolerance gets no
  // such licence: a kernel that lies about it must not hide its mismatches in the band's one free token).
  bool band_elements = false;
  // Which of min_cos, max_rel and max_mismatch_fraction a case set itself (apply_override): the envelope widens only
  // the defaults, never a value the case chose.
  bool case_min_cos = false, case_max_rel = false, case_mismatch = false;
  // Routing edge cases that mask or zero-weight every slot of some tokens (or route none to this rank): those
  // tokens' reference is exactly 0, a cosine is undefined there, and they are judged by absolute error with
  // tolerance 0 (every output element exactly +-0); an all-zero reference is then expected, not a harness error.
  bool zero_reference_expected = false;
  SystematicThresholds systematic;
};

Thresholds default_thresholds(const ProblemSpec& p, Tier tier);

// Ranges of a case's tolerance values: min_cos in [-1, 1], max_rel, atol and rtol finite and >= 0,
// max_mismatch_fraction in [0, 1]. A NaN threshold would compare false and switch its check off, so none is
// accepted. nullopt when every given value is in range.
std::optional<SpecProblem> check_tolerance(const ToleranceOverride& o);

// Applies a case's override (after check_tolerance, whose problem it throws as bad_input at `where`). Tightening is always allowed; loosening without `reason` throws bad_input naming the
// metric, the default, the requested value and `where` (file:line).
Thresholds apply_override(const Thresholds& base, const ToleranceOverride& o, const std::string& where);

}  // namespace moe
