#include "verdict/systematic.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iterator>
#include <limits>
#include <tuple>

#include "verdict/systematic_max.hpp"
#include "verdict/systematic_partial.hpp"
#include "verdict/systematic_stats.hpp"
#include "verdict/systematic_sums.hpp"
#include "fixtures/tensor_element.hpp"

namespace moe {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

StatisticRecord blank(const char* name, const SystematicThresholds& th) {
  StatisticRecord s;
  s.name = name;
  s.status = "ran";
  s.z = s.effect = kNaN;
  const std::string n = name;
  const std::pair<double, double> limits[] = {{th.gain_z, th.gain_floor},     {th.channel_z, th.channel_floor},
                                              {th.rounding_z, th.rounding_floor}, {th.expert_z, th.expert_floor},
                                              {th.offset_z, th.offset_floor},     {th.token_gain_z, th.token_gain_floor},
                                              {th.expert_partial_z, th.expert_partial_floor},
                                              {th.slot_direction_z, th.slot_direction_floor},
                                              {th.channel_group_z, th.channel_group_floor}};
  static_assert(std::size(limits) == std::size(kSystematicNames));
  static_assert(std::tuple_size_v<decltype(th.se_scale)> == std::size(kSystematicNames));
  static_assert(std::tuple_size_v<decltype(th.se_floor)> == std::size(kSystematicNames));
  for (std::size_t i = 0; i < std::size(kSystematicNames); ++i)
    if (n == kSystematicNames[i]) {
      std::tie(s.z_threshold, s.effect_floor) = limits[i];
      s.se_scale = std::isfinite(th.se_scale[i]) && th.se_scale[i] >= 1 ? th.se_scale[i] : 1.0;
      s.se_floor = std::isfinite(th.se_floor[i]) && th.se_floor[i] > 0 ? th.se_floor[i] : 0.0;
    }
  return s;
}
void decide(StatisticRecord& s) {
  s.failed = s.ran() && s.tested_z() > s.z_threshold && std::fabs(s.effect) > s.effect_floor;
}

struct View {
  const SystematicInput& in;
  double r(std::int64_t i) const { return in.ref[std::size_t(i)]; }
  double o(std::int64_t i) const { return element_as_f32(in.out, i); }
  double e(std::int64_t i) const { return o(i) - r(i); }  // exact in double: both are floats
  std::int64_t n() const { return in.tokens * in.hidden; }
};

// Each token's sums, and their total over all tokens.
struct AllTokenSums {
  std::vector<TokenSums> tok;
  TokenSums all;
};
AllTokenSums token_sums(const View& v) {
  const std::int64_t t = v.in.tokens, h = v.in.hidden;
  AllTokenSums a{std::vector<TokenSums>(std::size_t(t)), {}};
  for (std::int64_t i = 0; i < t; ++i) {
    for (std::int64_t c = 0; c < h; ++c) {
      const double r = v.r(i * h + c), e = v.e(i * h + c), r2 = r * r;
      a.tok[i] += TokenSums{e * r, r2, r2 * e * e, r2 * r * e, r2 * r2};
    }
    a.tok[i].close_token();
    a.all += a.tok[i];
  }
  return a;
}

// b - 1 = sum(e r) / sum(r^2), the slope of all tokens together; its variance from the residuals e - (b - 1) r,
// each element weighted by r^2 (the heteroscedasticity-robust variance of a least-squares slope: the error of a
// correct kernel grows with |r|), or clustered by token, whichever is larger (TokenSums::variance).
void gain(const TokenSums& all, StatisticRecord& s) {
  s.effect = all.slope();
  s.z = z_of(s.effect, std::sqrt(all.variance()) * s.se_scale);
}

// Each element's error in units of s^2 = max(the mean squared error of its token's OTHER channels, their relative
// error energy sum(e^2) / sum(r^2) times r^2, one output ulp of the token's RMS reference squared) + ulp_out(r)^2.
// A correct kernel's element error is part absolute (an upstream rounding flip spreads over every channel through
// W2) and part relative (the output rounding, an ulp of |r|). The output rounding hides an absolute error smaller
// than the ulp of most elements (they round to the same value), while it shows in full on the few elements with a
// small |r|: so the token's observed error level understates the absolute part up to one ulp of its typical value,
// which is the third term. The largest yardstick is never below any part, so Q_c = sum over the tokens of
// e^2 / s^2 is at most chi2(T) for a correct kernel (well below it where the errors are ulp flips). One output ulp
// of r is always allowed; the channel is left out of its own yardstick, so a dead channel cannot hide behind itself.
void channel(const View& v, StatisticRecord& s) {
  const std::int64_t t = v.in.tokens, h = v.in.hidden;
  if (h < 2) return void(not_run(s, "one hidden channel: nothing to compare it with"));
  std::vector<double> q(std::size_t(h), 0.0), ee(std::size_t(h), 0.0), rr(std::size_t(h), 0.0);
  const DType d = v.in.out.dtype();
  for (std::int64_t tok = 0; tok < t; ++tok) {
    double row_e = 0, row_r = 0;
    for (std::int64_t c = 0; c < h; ++c) {
      row_e += v.e(tok * h + c) * v.e(tok * h + c);
      row_r += v.r(tok * h + c) * v.r(tok * h + c);
    }
    const double hidden = ulp_out(std::sqrt(row_r / double(h)), d);  // what the output rounding can hide
    for (std::int64_t c = 0; c < h; ++c) {
      const std::int64_t i = tok * h + c;
      const double e2 = v.e(i) * v.e(i), r2 = v.r(i) * v.r(i), u = ulp_out(v.r(i), d);
      const double oe = std::max(0.0, row_e - e2), orr = std::max(0.0, row_r - r2);
      const double yardstick = std::max({oe / double(h - 1), orr > 0 ? oe / orr * r2 : 0.0, hidden * hidden});
      q[c] += e2 / (yardstick + u * u);
      ee[c] += e2;
      rr[c] += r2;
    }
  }
  auto rel = [&](std::int64_t c) { return rr[c] > 0 ? std::sqrt(ee[c] / rr[c]) : (ee[c] > 0 ? INFINITY : 0.0); };
  std::vector<Component> cs;
  cs.reserve(std::size_t(h));
  for (std::int64_t c = 0; c < h; ++c)
    cs.push_back({std::clamp(z_from_log_sf(log_chi2_sf(q[c], double(t))), -kZCap, kZCap) / s.se_scale, rel(c), c});
  s.at = fmt::format("channel {} (of {})", pick_component(cs, s), h);
}

// d = (o - r) / ulp_out(r) * sign(r), clipped to +-kRoundingClipUlps, over the elements with r != 0. The mean's
// variance: the elements' sample variance / n, or clustered by token, sum over tokens of (sum_c (d - mean))^2 / n^2.
void rounding_bias(const View& v, StatisticRecord& s) {
  const std::int64_t t = v.in.tokens, h = v.in.hidden;
  std::vector<double> tok_sum(std::size_t(t), 0.0), tok_n(std::size_t(t), 0.0);
  double sum = 0, sum2 = 0;
  std::int64_t n = 0;
  const DType d = v.in.out.dtype();
  for (std::int64_t tok = 0; tok < t; ++tok)
    for (std::int64_t c = 0; c < h; ++c) {
      const std::int64_t i = tok * h + c;
      if (v.r(i) == 0) continue;
      const double x = std::clamp(v.e(i) / ulp_out(v.r(i), d), -kRoundingClipUlps, kRoundingClipUlps) * (v.r(i) > 0 ? 1 : -1);
      sum += x; sum2 += x * x; ++n;
      tok_sum[tok] += x; tok_n[tok] += 1;
    }
  if (n < 2) return void(not_run(s, fmt::format("{} element(s) with a nonzero reference: too few for a mean and its spread", n)));
  const double mean = sum / double(n), var = std::max(0.0, (sum2 - double(n) * mean * mean) / double(n - 1));
  double cvar = 0;
  std::int64_t clusters = 0;
  for (std::int64_t tok = 0; tok < t; ++tok) {
    if (tok_n[tok] == 0) continue;
    const double u = tok_sum[tok] - mean * tok_n[tok];
    cvar += u * u;
    ++clusters;
  }
  s.effect = mean;
  s.z = z_of(mean, robust_se(var / double(n), cvar / (double(n) * double(n)), clusters) * s.se_scale);
}

// Each local expert's own gain beta_x = sum e s / sum s^2 over its slots' contributions s (token t, slot j routed to
// x; the reference's weighted slot output), the least-squares slope of the error on what x adds: an expert whose
// output is scaled by g gives beta_x = g - 1 whatever its tokens' other slots add. Its variance is the larger of the
// element-wise HC0 sum s^2 (e - beta s)^2 / (sum s^2)^2 and the one clustered by the expert's tokens.
void expert_regression(const View& v, StatisticRecord& s) {
  const std::int64_t t = v.in.tokens, h = v.in.hidden, first = v.in.first_local_expert, local = v.in.local_experts;
  const int k = v.in.routing.k;
  std::vector<std::vector<std::int64_t>> slots_of(std::size_t(std::max<std::int64_t>(local, 0)));  // i * k + j
  for (std::int64_t i = 0; i < t * k; ++i) {
    const std::int64_t x = v.in.routing.ids[std::size_t(i)] - first;
    if (x >= 0 && x < local) slots_of[x].push_back(i);
  }
  bool any_hit = false;
  std::vector<Component> cs;
  for (std::int64_t x = 0; x < local; ++x) {
    const auto& g = slots_of[x];
    if (g.empty()) continue;
    any_hit = true;
    TokenSums all;
    for (std::int64_t slot : g) {
      const std::int64_t tok = slot / k;
      const float* c = v.in.slots.data() + slot * h;
      TokenSums one;
      for (std::int64_t col = 0; col < h; ++col) {
        const double sc = c[col], e = v.e(tok * h + col), s2 = sc * sc;
        one += TokenSums{e * sc, s2, s2 * e * e, s2 * sc * e, s2 * s2};
      }
      one.close_token();
      all += one;
    }
    if (!(all.rr > 0)) continue;
    const double beta = all.slope(), z = z_of(beta, component_se(std::sqrt(all.variance()), s));
    if (!std::isnan(z)) cs.push_back({z, beta, x});
  }
  if (!any_hit) return void(not_run(s, "no token routes to an expert of this rank"));
  const std::int64_t shown = pick_component(cs, s);
  if (shown < 0) return void(not_run(s, "no local expert's contributions meet an error"));
  const std::int64_t x = cs[std::size_t(shown)].id;
  s.at = fmt::format("expert {} ({} slot(s) of {} tokens; of {} experts)", x + first, slots_of[x].size(), t, cs.size());
}

// Without the slots: each local expert's tokens against the others, the difference of their gains, with the
// variances added.
void expert(const View& v, const AllTokenSums& sums, StatisticRecord& s) {
  if (!v.in.slots.empty()) return expert_regression(v, s);
  const std::int64_t t = v.in.tokens, first = v.in.first_local_expert, local = v.in.local_experts;
  if (t < 2) return void(not_run(s, "one token: no other tokens to compare an expert's tokens with"));
  const auto& tok = sums.tok;
  const TokenSums& all = sums.all;
  std::vector<std::vector<std::int64_t>> tokens_of(std::size_t(std::max<std::int64_t>(local, 0)));
  const int k = v.in.routing.k;
  for (std::int64_t i = 0; i < t; ++i)
    for (int j = 0; j < k; ++j) {
      const std::int64_t x = v.in.routing.ids[std::size_t(i * k + j)] - first;
      if (x >= 0 && x < local && (tokens_of[x].empty() || tokens_of[x].back() != i)) tokens_of[x].push_back(i);
    }
  bool any_hit = false;
  std::vector<Component> cs;
  for (std::int64_t x = 0; x < local; ++x) {
    const auto& g = tokens_of[x];
    if (g.empty()) continue;
    any_hit = true;
    if (std::int64_t(g.size()) == t) continue;  // every token routes to it: no others
    TokenSums in;
    for (std::int64_t i : g) in += tok[i];
    const TokenSums out = all - in;
    if (!(in.rr > 0) || !(out.rr > 0)) continue;
    const double diff = in.slope() - out.slope(), z = z_of(diff, component_se(std::sqrt(in.variance() + out.variance()), s));
    if (!std::isnan(z)) cs.push_back({z, diff, x});  // NaN: no error in either group
  }
  if (!any_hit) return void(not_run(s, "no token routes to an expert of this rank"));
  // Shown: a failing expert, else the one closest to failing (a large |z| on a negligible effect is not close).
  const std::int64_t shown = pick_component(cs, s);
  if (shown < 0) return void(not_run(s, "no local expert has both its own tokens and others with an error to compare"));
  const std::int64_t x = cs[std::size_t(shown)].id;
  s.at = fmt::format("expert {} ({} of {} tokens; of {} experts)", x + first, tokens_of[x].size(), t, cs.size());
}
// The signed mean error over all elements relative to the mean |reference|: a constant offset, or an error with
// the sign of nothing the gain or the rounding statistic weighs by. Its variance: the elements' sample variance / n,
// or clustered by token, whichever is larger (robust_se).
void offset(const View& v, StatisticRecord& s) {
  const std::int64_t t = v.in.tokens, h = v.in.hidden, n = v.n();
  if (n < 2) return void(not_run(s, "one element: no spread to test a mean against"));
  double sum = 0, sum2 = 0, abs_r = 0;
  std::vector<double> tok_sum(std::size_t(t), 0.0);
  for (std::int64_t tok = 0; tok < t; ++tok)
    for (std::int64_t c = 0; c < h; ++c) {
      const double e = v.e(tok * h + c);
      sum += e; sum2 += e * e; abs_r += std::fabs(v.r(tok * h + c));
      tok_sum[tok] += e;
    }
  const double mean = sum / double(n), var = std::max(0.0, (sum2 - double(n) * mean * mean) / double(n - 1));
  double cvar = 0;
  for (std::int64_t tok = 0; tok < t; ++tok) cvar += (tok_sum[tok] - mean * double(h)) * (tok_sum[tok] - mean * double(h));
  if (!(abs_r > 0)) return void(not_run(s, "the reference is zero everywhere: no scale for an offset"));
  s.effect = sum / abs_r;
  s.z = z_of(mean, robust_se(var / double(n), cvar / (double(n) * double(n)), t) * s.se_scale);
}

// Each token's own gain b_t - 1 = sum_c e r / sum_c r^2 with its element-wise HC0 standard error: an error confined
// to a few tokens (a tile, a slot block, one sequence) that the all-token gain dilutes by their share. Shown: the
// token closest to failing.
// With SystematicInput::steps, a large token's z is taken after the step of one of its slots nearest its gain.
void token_gain(const View& v, const AllTokenSums& sums, StatisticRecord& s) {
  std::vector<Component> cs;
  for (std::size_t i = 0; i < sums.tok.size(); ++i) {
    const TokenSums& ts = sums.tok[i];
    if (!(ts.rr > 0)) continue;
    const double b = ts.slope(), z = z_of(b, component_se(std::sqrt(ts.variance()), s));
    if (!std::isnan(z)) cs.push_back({z, b, std::int64_t(i)});  // NaN: no error on this token
  }
  std::function<std::vector<double>(std::int64_t)> candidates;
  if (v.in.steps)
    candidates = [&](std::int64_t tok) {
      return step_effects(v.in.steps(tok, -1), v.in.ref.data() + tok * v.in.hidden, v.in.hidden,
                          sums.tok[std::size_t(tok)].rr);
    };
  const std::vector<double> taken = explain_steps(cs, candidates);
  const std::int64_t shown = pick_component(cs, s);
  if (shown < 0) return void(not_run(s, "no token has both a nonzero reference and an error"));
  s.at = fmt::format("token {} (of {}){}", cs[std::size_t(shown)].id, cs.size(), step_note(taken[std::size_t(shown)]));
}
}  // namespace

double ulp_out(double r, DType output_dtype) {
  const int emin = output_dtype == DType::f16 ? -14 : -126, mant = output_dtype == DType::bf16 ? 7 : output_dtype == DType::f16 ? 10 : 23;
  const double a = std::fabs(r);
  const int e = a == 0 || !std::isfinite(a) ? emin : std::max(std::ilogb(a), emin);
  return std::ldexp(1.0, e - mant);
}

std::vector<StatisticRecord> systematic_not_run(const std::string& why, const SystematicThresholds& th) {
  std::vector<StatisticRecord> v;
  for (const char* n : kSystematicNames) {
    v.push_back(blank(n, th));
    not_run(v.back(), why);
  }
  return v;
}

std::vector<StatisticRecord> systematic_checks(const SystematicInput& in, const SystematicThresholds& th) {
  const View v{in};
  bool any_error = false;
  for (std::int64_t i = 0; i < v.n(); ++i) {
    if (!std::isfinite(v.o(i)))
      return systematic_not_run("the output has unwritten or non-finite elements (see the per-token checks)", th);
    any_error = any_error || v.e(i) != 0;
  }
  if (!any_error) return systematic_not_run("the output equals the reference element for element: no error to test", th);
  std::vector<StatisticRecord> stats;
  for (const char* n : kSystematicNames) stats.push_back(blank(n, th));
  const AllTokenSums sums = token_sums(v);
  gain(sums.all, stats[0]);
  channel(v, stats[1]);
  rounding_bias(v, stats[2]);
  if (!in.slots.empty()) stats[3].effect_floor = th.expert_own_floor;
  expert(v, sums, stats[3]);
  offset(v, stats[4]);
  token_gain(v, sums, stats[5]);
  expert_partial(in, stats[6]);
  slot_direction(in, stats[7]);
  channel_group(in, stats[8]);
  // No error where the reference is nonzero: a slope and a mean of zero with no spread, 0 / 0.
  for (int i : {0, 2, 5})
    if (stats[i].ran() && std::isnan(stats[i].z))
      not_run(stats[i], "every error sits where the reference is 0: no spread to test against");
  for (int i : {0, 2, 4, 7})  // one z each: its own spread
    if (stats[i].ran()) stats[i].z_single = stats[i].z, stats[i].spread = std::fabs(stats[i].z), stats[i].components = 1;
  for (auto& s : stats) decide(s);
  return stats;
}

const StatisticRecord* first_failure(const std::vector<StatisticRecord>& stats) {
  for (const auto& s : stats)
    if (s.failed) return &s;
  return nullptr;
}

namespace {
const char* effect_label(const std::string& n) {
  return n == "gain" ? "b-1" : n == "channel" ? "rel" : n == "rounding_bias" ? "mean (ulp)" : n == "offset" ? "mean/mean|r|"
         : n == "token_gain" ? "b_t-1" : n == "expert_partial" ? "beta_tj" : n == "slot_direction" ? "slot slope"
         : n == "channel_group" ? "group b-1" : "gain difference";
}
}  // namespace

std::string systematic_reason(const StatisticRecord& s) {
  return fmt::format("{}: {} {:+.3e} beyond the floor {:.1e} and z {:.4g} beyond {:g}{}", s.name, effect_label(s.name),
                     s.effect, s.effect_floor, s.z, s.z_threshold, s.at.empty() ? "" : ", at " + s.at);
}

std::string systematic_lines(const std::vector<StatisticRecord>& stats) {
  if (stats.empty()) return "";
  std::string out = "  systematic (a statistic fails when |z| > threshold AND |effect| > floor):\n";
  for (const auto& s : stats) {
    if (!s.ran()) { out += fmt::format("    {}: {}\n", s.name, s.status); continue; }
    out += fmt::format("    {}: z {:.4g} (threshold {:g}), {} {:+.3e} (floor {:.1e}){}{}\n", s.name, s.z, s.z_threshold,
                       effect_label(s.name), s.effect, s.effect_floor, s.at.empty() ? "" : " at " + s.at,
                       s.failed ? ": FAIL" : "");
  }
  return out;
}

}  // namespace moe
