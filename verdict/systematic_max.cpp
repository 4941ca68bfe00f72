#include "verdict/systematic_max.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "verdict/systematic_stats.hpp"

namespace moe {

std::vector<double> explain_steps(std::vector<Component>& cs,
                                  const std::function<std::vector<double>(std::int64_t id)>& candidates) {
  std::vector<double> taken(cs.size(), 0.0);
  if (!candidates || cs.empty()) return taken;
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
    double best = 0;
    for (double b : candidates(c.id))
      if (std::isfinite(b) && std::fabs(c.effect - b) < std::fabs(c.effect - best)) best = b;
    if (best == 0) continue;
    c.z *= (c.effect - best) / c.effect;
    taken[i] = best;
  }
  return taken;
}

std::vector<double> step_effects(const std::vector<std::vector<double>>& steps, const float* onto, std::int64_t h,
                                 double rr) {
  std::vector<double> b;
  for (const std::vector<double>& d : steps) {
    double dot = 0;
    for (std::int64_t c = 0; c < h && c < std::int64_t(d.size()); ++c) dot += d[std::size_t(c)] * onto[c];
    b.push_back(dot / rr);
  }
  return b;
}

std::string step_note(double taken) {
  return taken == 0 ? "" : fmt::format("; z after a requantization step of {:.3g}", taken);
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
