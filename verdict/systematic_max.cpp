#include "verdict/systematic_max.hpp"

#include <algorithm>
#include <cmath>

#include "verdict/systematic_stats.hpp"

namespace moe {

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
