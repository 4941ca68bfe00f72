// The guard bytes around a device buffer the harness hands a kernel (gpu::GuardedBuffer, gpu_runtime.hpp) and the
// comparison of a guard read back against them. Plain C++ without a GPU runtime, so the comparison is unit-tested on
// the host with hand-made byte arrays (kernels/runtime/tests/red_zone_test.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace moe {

// Guard bytes on each side of a guarded device buffer. 256 keeps the inner pointer as aligned as the allocation
// (the runtimes align to 256 bytes), so a kernel's vector loads see the alignment an unguarded buffer has.
inline constexpr std::size_t kRedZoneBytes = 256;

// Byte i of a guard: every byte value once per guard (0x3B is odd), the host red zones' pattern too, so no constant
// fill and no run of zeros or of one value leaves a guard intact.
inline std::uint8_t red_zone_byte(std::size_t i) { return std::uint8_t(0xA5u + 0x3Bu * (i & 0xFFu)); }

// One guard's pattern, kRedZoneBytes long.
std::vector<std::uint8_t> red_zone_pattern();

enum class RedZoneSide { before, after };

// How much of one guard changed: bytes differing from the pattern and the first of them (bytes from the buffer's
// start, negative, before it; bytes past its end, from +0, after it); changed 0 when intact.
struct RedZoneChange {
  std::int64_t changed = 0;
  std::int64_t first = 0;
};
RedZoneChange compare_red_zone(RedZoneSide side, const std::uint8_t* got, std::size_t n);

// The violation text for one side of buffer `name` ("device out: 4 byte(s) after the end changed, first at +0"),
// or "" when intact; adds the changed bytes to `bytes`.
std::string red_zone_violation(const std::string& name, RedZoneSide side, const std::uint8_t* got, std::size_t n,
                               std::int64_t& bytes);

}  // namespace moe
