#include "verdict/systematic_max.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <utility>

#include "verdict/systematic_stats.hpp"

namespace moe {

double mixture_z(double z, double effect, const std::vector<StepEffect>& steps) {
  if (!(z != 0) || !std::isfinite(z) || !(effect != 0) || !std::isfinite(effect)) return z;
  const double se = std::fabs(effect / z), a = std::fabs(effect);
  // The distribution of B, the sum over groups of each group's step (or none): (value, probability) atoms.
  std::map<int, std::vector<StepEffect>> groups;
  for (const StepEffect& st : steps)
    if (st.p > 0 && std::isfinite(st.b) && std::isfinite(st.p)) groups[st.group].push_back(st);
  if (groups.empty()) return z;
  std::vector<std::pair<double, double>> atoms{{0.0, 1.0}}, next;
  double lost = 0;
  for (const auto& [group, list] : groups) {
    double none = 1;
    for (const StepEffect& st : list) none -= st.p;
    next.clear();
    for (const auto& [b, p] : atoms) {
      if (none > 0) next.emplace_back(b, p * none);
      for (const StepEffect& st : list) next.emplace_back(b + st.b, p * st.p);
    }
    std::sort(next.begin(), next.end());
    atoms.clear();
    for (const auto& x : next)
      if (!atoms.empty() && atoms.back().first == x.first) atoms.back().second += x.second;
      else atoms.push_back(x);
    if (atoms.size() > kMaxAtoms) {
      std::sort(atoms.begin(), atoms.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
      for (std::size_t i = kMaxAtoms; i < atoms.size(); ++i) lost += atoms[i].second;
      atoms.resize(kMaxAtoms);
    }
  }
  // log P(|B + se N| >= a) = log sum_B p_B (P(N >= (a - B) / se) + P(N >= (a + B) / se)), in log space (a real
  // defect's tail is far below a double's range).
  std::vector<double> logs;
  if (lost > 0) logs.push_back(std::log(lost));
  for (const auto& [b, p] : atoms)
    if (p > 0)
      for (double x : {(a - b) / se, (a + b) / se}) logs.push_back(std::log(p) + log_normal_sf(x));
  double top = -INFINITY;
  for (double l : logs) top = std::max(top, l);
  double sum = 0;
  for (double l : logs) sum += std::exp(l - top);
  const double log_p = std::min(0.0, top + std::log(sum) - std::log(2.0));  // the one-sided tail of |z|
  return std::copysign(std::min(std::fabs(z), std::max(0.0, z_from_log_sf(log_p))), z);
}

std::vector<double> explain_steps(std::vector<Component>& cs,
                                  const std::function<std::vector<StepEffect>(std::int64_t id)>& candidates) {
  std::vector<double> before(cs.size(), 0.0);
  if (!candidates || cs.empty()) return before;
  const double z1 = single_z_threshold(kExplainAbove, double(cs.size()), false);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < cs.size(); ++i)
    if (std::fabs(cs[i].z) > z1 && std::isfinite(cs[i].effect) && cs[i].effect != 0) order.push_back(i);
  // The largest effects first: an order no scale or floor changes, so a component explained at the defaults is
  // explained under any envelope that still gates it (its z only falls, the gated set only shrinks).
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const double ea = std::fabs(cs[a].effect), eb = std::fabs(cs[b].effect);
    return ea > eb || (ea == eb && a < b);
  });
  if (order.size() > std::size_t(kMaxExplained)) order.resize(std::size_t(kMaxExplained));
  for (std::size_t i : order) {
    Component& c = cs[i];
    const double z = mixture_z(c.z, c.effect, candidates(c.id));
    if (z == c.z) continue;
    before[i] = c.z;
    c.z = z;
  }
  return before;
}

std::vector<StepEffect> step_effects(const std::vector<ScaleStep>& steps, const float* onto, std::int64_t h,
                                     double rr) {
  std::vector<StepEffect> out;
  for (const ScaleStep& st : steps) {
    double dot = 0;
    for (std::int64_t c = 0; c < h && c < std::int64_t(st.d.size()); ++c) dot += st.d[std::size_t(c)] * onto[c];
    out.push_back({st.group, st.p, dot / rr});
  }
  return out;
}

std::string step_note(double z_before) {
  return z_before == 0 ? "" : fmt::format("; z {:.3g} before its requantization steps' mixture", z_before);
}

std::int64_t pick_component(const std::vector<Component>& components, StatisticRecord& s) {
  if (components.empty()) return -1;
  const bool one_sided = s.name == "channel";
  const double m = double(components.size());
  // The single test's threshold: compared with it, each component's share needs no correction of its own (the
  // correction is monotone in |z|), which is computed once, for the component shown.
  const double z1 = single_z_threshold(s.z_threshold, m, one_sided);
  double sum2 = 0, best_share = -INFINITY;
  bool best_fails = false;
  std::int64_t best = -1;
  for (std::size_t i = 0; i < components.size(); ++i) {
    const Component& c = components[i];
    const double tested = one_sided ? c.z : std::fabs(c.z), zp = one_sided ? std::max(0.0, c.z) : c.z;
    sum2 += one_sided ? 2.0 * zp * zp : zp * zp;
    const double share = std::min(tested / z1, std::fabs(c.effect) / s.effect_floor);
    const bool fails = tested > z1 && std::fabs(c.effect) > s.effect_floor;
    // A failing component first, then the larger share of its nearer limit.
    if (best < 0 || (fails && !best_fails) || (fails == best_fails && share > best_share))
      best = std::int64_t(i), best_share = share, best_fails = fails;
  }
  const Component& b = components[std::size_t(best)];
  s.z_single = b.z;
  // -40: z_from_log_sf's lowest value (P = 1), where every component lies far under its null.
  s.z = one_sided ? std::max(-40.0, multiplicity_z_upper(b.z, m)) : multiplicity_z(b.z, m);
  s.effect = b.effect;
  s.components = m;
  s.spread = std::sqrt(sum2 / m);
  return best;
}

}  // namespace moe
