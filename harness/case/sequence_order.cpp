#include "harness/case/sequence_order.hpp"

#include <numeric>
#include <utility>

#include "fixtures/philox.hpp"

namespace moe {

std::vector<std::size_t> sequence_order(std::size_t steps, const std::string& order, std::uint64_t seed) {
  std::vector<std::size_t> v(steps);
  std::iota(v.begin(), v.end(), std::size_t(0));
  if (order != "shuffled") return v;
  const PhiloxKey key = {std::uint32_t(seed), std::uint32_t(seed >> 32)};
  for (std::size_t i = steps; i-- > 1;) {
    const std::uint32_t r = philox4x32_10({std::uint32_t(i), 0, 0, 0}, key)[0];
    std::swap(v[i], v[r % (i + 1)]);
  }
  return v;
}

}  // namespace moe
