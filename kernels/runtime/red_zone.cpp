#include "kernels/runtime/red_zone.hpp"

namespace moe {

std::vector<std::uint8_t> red_zone_pattern() {
  std::vector<std::uint8_t> v(kRedZoneBytes);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = red_zone_byte(i);
  return v;
}

RedZoneChange compare_red_zone(RedZoneSide side, const std::uint8_t* got, std::size_t n) {
  RedZoneChange c;
  for (std::size_t i = 0; i < n; ++i) {
    if (got[i] == red_zone_byte(i)) continue;
    if (!c.changed++) c.first = side == RedZoneSide::before ? std::int64_t(i) - std::int64_t(n) : std::int64_t(i);
  }
  return c;
}

std::string red_zone_violation(const std::string& name, RedZoneSide side, const std::uint8_t* got, std::size_t n,
                               std::int64_t& bytes) {
  const RedZoneChange c = compare_red_zone(side, got, n);
  if (!c.changed) return "";
  bytes += c.changed;
  const bool before = side == RedZoneSide::before;
  return name + ": " + std::to_string(c.changed) + " byte(s) " + (before ? "before the start" : "after the end") +
         " changed, first at " + (before ? "" : "+") + std::to_string(c.first);
}

}  // namespace moe
