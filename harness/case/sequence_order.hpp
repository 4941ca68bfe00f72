// The run order of a call sequence's steps (docs/judging.md "Call sequences"): scripted is file order; shuffled is
// a Fisher-Yates permutation drawn from the seed with Philox4x32-10 (fixtures/philox.hpp), so a seed printed by one
// run replays the same order anywhere.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace moe {

// order[k] = the file position of the step that runs k-th. For i = n-1 down to 1: draw r = the first word of
// philox4x32_10({i, 0, 0, 0}, {seed low 32 bits, seed high 32 bits}), j = r mod (i + 1), swap(order[i], order[j]),
// starting from the identity. (The modulo's bias is below (i + 1) / 2^32: nothing for a sequence of steps.)
std::vector<std::size_t> sequence_order(std::size_t steps, const std::string& order, std::uint64_t seed);

}  // namespace moe
