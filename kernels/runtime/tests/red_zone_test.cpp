// The comparison behind the device red zones (kernels/runtime/red_zone.hpp), on hand-made guards: what a read-back
// guard says about the writes a kernel made around its buffer.
#include <gtest/gtest.h>

#include "kernels/runtime/red_zone.hpp"

namespace moe {
namespace {

TEST(RedZone, PatternHoldsEveryByteValueOnce) {
  // 0x3B is odd, so i -> 0xA5 + 0x3B i is a permutation of the bytes: no value repeats, and a zero-filled or
  // constant write changes all but one byte of a guard.
  const std::vector<std::uint8_t> p = red_zone_pattern();
  ASSERT_EQ(p.size(), kRedZoneBytes);
  EXPECT_EQ(p[0], 0xA5);
  EXPECT_EQ(p[1], 0xE0);  // 0xA5 + 0x3B
  std::vector<int> seen(256, 0);
  for (std::uint8_t b : p) ++seen[b];
  for (int v = 0; v < 256; ++v) EXPECT_EQ(seen[std::size_t(v)], 1) << v;
  const std::vector<std::uint8_t> zeros(kRedZoneBytes, 0);
  EXPECT_EQ(compare_red_zone(RedZoneSide::after, zeros.data(), zeros.size()).changed, std::int64_t(kRedZoneBytes) - 1);
}

TEST(RedZone, IntactGuardsSayNothingAndCountNothing) {
  const std::vector<std::uint8_t> p = red_zone_pattern();
  std::int64_t bytes = 0;
  EXPECT_EQ(red_zone_violation("device out", RedZoneSide::before, p.data(), p.size(), bytes), "");
  EXPECT_EQ(red_zone_violation("device out", RedZoneSide::after, p.data(), p.size(), bytes), "");
  EXPECT_EQ(bytes, 0);
}

TEST(RedZone, OneBf16ElementPastTheEndIsTwoBytesAtPlusZero) {
  std::vector<std::uint8_t> after = red_zone_pattern();
  after[0] = 0x80, after[1] = 0x3F;  // bf16 1.0 written just past the end
  std::int64_t bytes = 0;
  EXPECT_EQ(red_zone_violation("device out", RedZoneSide::after, after.data(), after.size(), bytes),
            "device out: 2 byte(s) after the end changed, first at +0");
  EXPECT_EQ(bytes, 2);
}

TEST(RedZone, AWriteBeforeTheStartCountsFromTheStartNegatively) {
  std::vector<std::uint8_t> before = red_zone_pattern();
  before[kRedZoneBytes - 4] = 0, before[kRedZoneBytes - 1] = 0;  // bytes -4 and -1; -3 and -2 left as they were
  const RedZoneChange c = compare_red_zone(RedZoneSide::before, before.data(), before.size());
  EXPECT_EQ(c.changed, 2);
  EXPECT_EQ(c.first, -4);
  std::int64_t bytes = 10;
  EXPECT_EQ(red_zone_violation("device ids", RedZoneSide::before, before.data(), before.size(), bytes),
            "device ids: 2 byte(s) before the start changed, first at -4");
  EXPECT_EQ(bytes, 12);  // added to what was counted already
}

TEST(RedZone, AWriteFarPastTheEndNamesItsOffset) {
  std::vector<std::uint8_t> after = red_zone_pattern();
  after[100] = std::uint8_t(after[100] ^ 1);
  after[255] = std::uint8_t(after[255] ^ 0xFF);
  const RedZoneChange c = compare_red_zone(RedZoneSide::after, after.data(), after.size());
  EXPECT_EQ(c.changed, 2);
  EXPECT_EQ(c.first, 100);
}

TEST(RedZone, AByteWrittenWithThePatternsOwnValueIsNotSeen) {
  // What a guard cannot tell: a write of the very byte the pattern holds there.
  std::vector<std::uint8_t> after = red_zone_pattern();
  after[7] = red_zone_byte(7);
  EXPECT_EQ(compare_red_zone(RedZoneSide::after, after.data(), after.size()).changed, 0);
}

}  // namespace
}  // namespace moe
