// The maxima's correction for their number (verdict/systematic_max.hpp, verdict/systematic_stats.hpp): the one-sided
// correction and the single test's threshold checked with erfc and against normal-table values, and the component
// a maximum shows, its corrected z and its spread, each from hand-built components.
#include <gtest/gtest.h>

#include <cmath>

#include "verdict/systematic_max.hpp"
#include "verdict/systematic_stats.hpp"

namespace moe {
namespace {

double upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }  // P(N(0, 1) > z)

StatisticRecord record(const char* name, double z_threshold, double floor) {
  StatisticRecord s;
  s.name = name;
  s.status = "ran";
  s.z_threshold = z_threshold;
  s.effect_floor = floor;
  return s;
}

}  // namespace

// One-sided: P(N > zc) = 1 - (1 - P(N > z))^m, checked with erfc; never above z; m = 1 is z itself.
TEST(SystematicMax, UpperCorrectionIsSidaksOneSided) {
  EXPECT_DOUBLE_EQ(multiplicity_z_upper(7.0, 1.0), 7.0);
  for (double z : {-1.0, 3.0, 7.5})
    for (double m : {2.0, 256.0, 8192.0}) {
      const double pm = -std::expm1(m * std::log1p(-upper_tail(z)));
      const double zc = multiplicity_z_upper(z, m);
      EXPECT_NEAR(upper_tail(zc) / pm, 1.0, 1e-6) << z << " " << m;
      EXPECT_LT(zc, z);
    }
}

// The single test's threshold: two-sided 6 over 8192 tests is |z| 7.3239 (2 Q(7.3239) = 2.41e-13 = 2 Q(6) / 8192,
// Q(6) = 9.866e-10 from normal tables), one-sided 7 over 8192 is 8.1684 (Q(7) = 1.280e-12, / 8192 = 1.562e-16);
// and the correction of that threshold gives the threshold back.
TEST(SystematicMax, SingleThresholdIsTheCorrectionsInverse) {
  EXPECT_NEAR(single_z_threshold(6.0, 8192.0, false), 7.3239, 1e-3);
  EXPECT_NEAR(single_z_threshold(7.0, 8192.0, true), 8.1684, 1e-3);
  EXPECT_EQ(single_z_threshold(6.0, 1.0, false), 6.0);
  for (double m : {3.0, 100.0, 65536.0}) {
    EXPECT_NEAR(multiplicity_z(single_z_threshold(6.0, m, false), m), 6.0, 1e-6) << m;
    EXPECT_NEAR(multiplicity_z_upper(single_z_threshold(7.0, m, true), m), 7.0, 1e-6) << m;
  }
}

// Three components, threshold 6 and floor 0.01: (z 3, effect 0.5) has the floor but not the z, (z 100, effect
// 0.001) the z but not the floor, (z -50, effect -0.02) both: it is shown, its z corrected for 3 tests (still
// below 0: the sign is kept), and the spread is sqrt((9 + 10000 + 2500) / 3).
TEST(SystematicMax, AFailingComponentIsShownWithItsCorrectedZAndTheSpreadOfAll) {
  StatisticRecord s = record("token_gain", 6.0, 0.01);
  EXPECT_EQ(pick_component({{3.0, 0.5, 10}, {100.0, 0.001, 11}, {-50.0, -0.02, 12}}, s), 2);
  EXPECT_EQ(s.z_single, -50.0);
  EXPECT_EQ(s.z, multiplicity_z(-50.0, 3.0));
  EXPECT_LT(s.z, -49.9);
  EXPECT_EQ(s.effect, -0.02);
  EXPECT_EQ(s.components, 3.0);
  EXPECT_NEAR(s.spread, std::sqrt(12509.0 / 3.0), 1e-12);
  // Without the failing one, the closest to failing: min(3 / z1, 50) against min(100 / z1, 0.1), z1 = the single
  // test's threshold for 2 tests (about 6.2): 0.48 against 0.1.
  StatisticRecord t = record("token_gain", 6.0, 0.01);
  EXPECT_EQ(pick_component({{3.0, 0.5, 10}, {100.0, 0.001, 11}}, t), 0);
  EXPECT_EQ(t.effect, 0.5);
  StatisticRecord none = record("token_gain", 6.0, 0.01);
  EXPECT_EQ(pick_component({}, none), -1);
}

// channel is one-sided: a negative z is less error than expected, and its spread counts the upper half twice
// (sqrt(2 x (0 + 1) / 2) = 1 for z -2 and 1, as for a standard normal).
TEST(SystematicMax, ChannelIsOneSided) {
  StatisticRecord s = record("channel", 7.0, 0.02);
  EXPECT_EQ(pick_component({{-2.0, 0.5, 0}, {1.0, 0.01, 1}}, s), 1);  // share min(1 / z1, 0.5) beats min(-2 / z1, ...)
  EXPECT_NEAR(s.spread, 1.0, 1e-12);
  EXPECT_EQ(s.z, multiplicity_z_upper(1.0, 2.0));
}

}  // namespace moe
