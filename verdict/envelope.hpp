// The thresholds of a case from its simulated envelope (docs/judging.md "The envelope"). The harness recomputes the
// contract reference under draws of the legitimate variation the kernel's contract allows (reference/moe/
// ensemble.hpp: the declared accumulation precision, the activation's last bits, every rounding and requantization
// after them) and measures each member like a kernel output against the contract reference; this file keeps those
// measurements and derives from them, with the stated margin kEnvelopeMargin:
//   band allowance   ceil(c + 3 sqrt(c)), c = the most band tokens of one member / sampled tokens x T (a count's
//                    three standard deviations, not the margin: twice a rate of 40 % would excuse 80 % of T), at
//                    least the default max(1, ceil(band_fraction x T))
//   min_cos, max_rel widened to margin x the members' worst non-band token, where that is beyond the defaults, at
//                    most kEnvelopeMaxWiden times the defaults' distance (non-finite member tokens are left out)
//   mismatch limit   max(default, margin x the members' largest mismatch fraction)
//   every statistic's standard-error scale (SystematicThresholds::se_scale) = max(1, the RMS over the rounding
//                    members (the members where there are none) of the statistic's spread, the same RMS over the
//                    sparse members where there are any): |z| of a scalar statistic (gain, rounding_bias, offset,
//                    slot_direction), the RMS of the components' z of a maximum (channel, expert, token_gain,
//                    expert_partial, channel_group)): the element-wise standard errors assume independent errors,
//                    and the intermediate's roundings carried through W2 are not. Two regimes of a correct kernel:
//                    many flips (an extra rounding: the rounding members flip a third of them) and a few code steps
//                    per token-slot (an fp8 GEMM's accumulation on the hardware: the sparse members), whose errors
//                    lie along a few of W2's columns and give a token-slot's z a heavier spread; an accumulation
//                    member's bias, a truncating matrix unit, is no variance. Every z is divided by it; a maximum's
//                    z is then corrected for its number of components, so it reads as one test's |z| whatever T, H
//                    or the number of experts (measured per component, the scale does not depend on how many tokens
//                    the members sampled)
//   a two-sided maximum's standard-error floor (SystematicThresholds::se_floor; expert, token_gain, expert_partial,
//                    channel_group), where there are sparse members: the floor tau at which their shown components,
//                    each z taken as beta / sqrt((se x scale)^2 + tau^2) and corrected for its number, have an RMS of
//                    1 (0 where the scale alone gives that). A requantization step moves one token-slot by a percent
//                    or two with almost no residual: its element-wise standard error is tiny and no scale of it
//                    brings such a z back from its tail
//   a maximum's z threshold also max(default, margin x the members' largest corrected z at the scale without the
//                    sparse members, margin x the members' and the sparse members' at the scale and floor): a maximum
//                    has tails an RMS does not see, and the sparse members never tighten a threshold
//   every floor      max(default, margin x the members' largest |effect|), for a pooled statistic (gain,
//                    rounding_bias, offset, slot_direction) at most kEnvelopeMaxWiden x default
// A threshold never tightens here: the defaults of verdict/thresholds.cpp are the floor of every derived value. A
// statistic this file does not name keeps its defaults. The members are judged with the scheme's default thresholds
// (a case's own atol/rtol do not reach them), and the activation's draw falls after an act_gate rounding, so the
// envelope does not flip act_gate roundings (it is narrower there than a kernel's last bits could be).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "reports/run_report.hpp"
#include "verdict/thresholds.hpp"

namespace moe {

inline constexpr double kEnvelopeMargin = 2.0;
// min_cos, max_rel, the mismatch limit and a pooled statistic's floor widen to at most this many times the
// defaults' (1 - min_cos, max_rel, the fraction, the floor): a member's one degenerate token must not switch a check
// off, nor a declared accumulation's modelled bias a bias statistic.
inline constexpr double kEnvelopeMaxWiden = 4.0;

struct EnvelopeMember {
  std::vector<double> token_cos, token_rel;  // the sampled tokens'
  double mismatch_fraction = 0;              // at the scheme's default atol and rtol
  std::vector<StatisticRecord> systematic;   // each statistic's z and effect on the sampled tokens
};

struct Envelope {
  std::string model;                  // what was simulated: "members=16 tokens=32/128 accum=mma13"
  std::int64_t tokens = 0;            // T of the case
  std::vector<std::int64_t> sampled;  // the simulated tokens
  std::vector<double> token_noise;    // q_t of the sampled tokens (the requantization band's scale)
  std::vector<EnvelopeMember> members;
  std::vector<EnvelopeMember> rounding;  // the rounding ensemble's members: their systematic statistics only
  std::vector<EnvelopeMember> sparse;    // the sparse ensemble's (an 8-bit GEMM's declared accum=mmaN): the same
  bool empty() const { return members.empty(); }
};

// What the envelope set, for the report: each derived value and the members' extreme it came from.
struct EnvelopeLimits {
  bool applied = false;
  std::int64_t band_members_max = 0;  // the most band tokens of one member (of the sampled tokens)
  double members_worst_cos = 1, members_worst_rel = 0, members_max_mismatch = 0;
  std::vector<std::pair<std::string, double>> z_scale;  // per statistic: its standard-error scale
  std::vector<std::pair<std::string, double>> z_floor;  // per two-sided maximum with a floor: its standard-error floor
};

// th with the envelope's derived values (unchanged when e is empty or th is the exact tier's).
Thresholds with_envelope(const Thresholds& th, const Envelope& e, EnvelopeLimits* limits = nullptr);

// The envelope as JSON text and back (reference files keep it beside the references); parse returns an empty
// envelope for text that is not one.
std::string envelope_to_json(const Envelope& e);
Envelope envelope_from_json(const std::string& text);

}  // namespace moe
