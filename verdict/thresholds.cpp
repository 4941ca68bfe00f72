#include "verdict/thresholds.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "fixtures/error.hpp"

namespace moe {

// The thresholds of p's tier and quantization scheme, before its routing edge case.
static Thresholds default_thresholds_of_scheme(const ProblemSpec& p, Tier tier);

Thresholds default_thresholds(const ProblemSpec& p, Tier tier) {
  Thresholds t = default_thresholds_of_scheme(p, tier);
  const RoutingEdge e = p.routing.edge;
  t.zero_reference_expected = e == RoutingEdge::masked_ids || e == RoutingEdge::zero_weights || e == RoutingEdge::ep_rank_empty;
  return t;
}

static Thresholds default_thresholds_of_scheme(const ProblemSpec& p, Tier tier) {
  Thresholds t;
  if (tier == Tier::exact) {
    // Bit equality is the verdict; cos and rel only have to be consistent with it (their own fp64 arithmetic
    // gives cos = 1 - 1e-16 on identical vectors).
    t.min_cos = 1.0 - 1e-9; t.max_rel = 0.0; t.atol = 0.0; t.rtol = 0.0; t.max_mismatch_fraction = 0.0; t.bitwise = true;
    t.systematic.on = false;
    return t;
  }
  // A correct kernel differs from the contract reference by summation order, which can flip a rounding of the
  // stage-1 intermediate (one bf16 ulp, 2^-8 relative) or of a quantized activation (one fp8 ulp, 2^-3 relative at
  // worst for e4m3, one e2m1/MX step for MXFP4 paths) and of the output (one output-dtype ulp). The values below
  // bound those effects per token with margin; results/calibration records the measured worst cases they cover.
  // Quantized min_cos 0.9998: a skipped requantization of the intermediate reaches 1 - cos >= 3.2e-4, correct
  // kernels at most 5.6e-5 (docs/judging.md "Thresholds").
  const bool quant_act = p.quant.act != ActFormat::none || (p.n_shared > 0 && p.shared_quant.act != ActFormat::none);
  const bool mx = p.quant.act == ActFormat::mxfp8;
  t.min_cos = quant_act ? 0.9998 : 0.99990;
  t.max_rel = quant_act ? (mx ? 0.05 : 0.04) : 0.012;
  t.atol = quant_act ? 2e-2 : 8e-3;
  t.rtol = quant_act ? 8e-2 : 1.6e-2;
  t.max_mismatch_fraction = quant_act ? 0.01 : 0.002;
  // An expert's own gain keeps the default 5e-3 on every scheme: a kernel whose fp8 GEMMs run on matrix units that
  // accumulate with fewer bits (one slot's gain of -0.7 % to -1.5 % at decode on the H200,
  // results/runs/2026-12-02-h200-panel/RUN.md) declares `accum=mmaN`, and its envelope widens the floor to twice
  // what such an accumulator does, at most 4 times 5e-3 (verdict/envelope.hpp); a kernel that accumulates exactly is
  // held to 5e-3.
  // Every activation format is dynamic (a scale per token, 128-group or 32-block from the values themselves).
  if (quant_act) { t.band_factor = kBandFactor; t.band_fraction = kBandFraction; }
  t.rel_floor = 1e-6;
  return t;
}

std::optional<SpecProblem> check_tolerance(const ToleranceOverride& o) {
  struct Range { const char* key; const std::optional<double>& v; double lo, hi; const char* fix; };
  const double big = std::numeric_limits<double>::max();
  const Range ranges[] = {
      {"min_cos", o.min_cos, -1.0, 1.0, "a cosine: use a value in [-1, 1]"},
      {"max_rel", o.max_rel, 0.0, big, "use a finite relative error >= 0"},
      {"atol", o.atol, 0.0, big, "use a finite absolute tolerance >= 0"},
      {"rtol", o.rtol, 0.0, big, "use a finite relative tolerance >= 0"},
      {"max_mismatch_fraction", o.max_mismatch_fraction, 0.0, 1.0, "a fraction of the elements: use a value in [0, 1]"},
  };
  for (const Range& r : ranges) {
    if (!r.v || (*r.v >= r.lo && *r.v <= r.hi)) continue;  // NaN fails both comparisons
    const std::string key = std::string("tolerance.") + r.key;
    if (!std::isfinite(*r.v))
      return SpecProblem{key, "is " + fmt::format("{}", *r.v) + ", not a finite number (a NaN or infinite threshold switches its check off)", r.fix};
    return SpecProblem{key, fmt::format("value {} outside [{}, {}]", *r.v, r.lo, r.hi == big ? "inf" : fmt::format("{}", r.hi)), r.fix};
  }
  return std::nullopt;
}

Thresholds apply_override(const Thresholds& base, const ToleranceOverride& o, const std::string& where) {
  if (auto p = check_tolerance(o)) throw_bad_input(where, p->key, p->problem, p->fix);
  Thresholds t = base;
  auto loosen = [&](const char* key, double def, double val, bool looser) {
    if (looser && o.reason.empty())
      throw_bad_input(where, "tolerance." + std::string(key),
                      "loosens the default " + std::to_string(def) + " to " + std::to_string(val) + " without a reason",
                      "add tolerance.reason with the measured justification, or tighten instead");
  };
  if (o.min_cos) { loosen("min_cos", base.min_cos, *o.min_cos, *o.min_cos < base.min_cos); t.min_cos = *o.min_cos; t.case_min_cos = true; }
  if (o.max_rel) { loosen("max_rel", base.max_rel, *o.max_rel, *o.max_rel > base.max_rel); t.max_rel = *o.max_rel; t.case_max_rel = true; }
  if (o.atol) { loosen("atol", base.atol, *o.atol, *o.atol > base.atol); t.atol = *o.atol; }
  if (o.rtol) { loosen("rtol", base.rtol, *o.rtol, *o.rtol > base.rtol); t.rtol = *o.rtol; }
  if (o.max_mismatch_fraction) {
    loosen("max_mismatch_fraction", base.max_mismatch_fraction, *o.max_mismatch_fraction,
           *o.max_mismatch_fraction > base.max_mismatch_fraction);
    t.max_mismatch_fraction = *o.max_mismatch_fraction;
    t.case_mismatch = true;
  }
  return t;
}

}  // namespace moe
