#include "kernels/runtime/device_info.hpp"

#include <gtest/gtest.h>

namespace moe {

TEST(DeviceInfo, NormalizeArchDropsTargetFeatures) {
  EXPECT_EQ(normalize_arch("gfx942:sramecc+:xnack-"), "gfx942");
  EXPECT_EQ(normalize_arch("gfx950"), "gfx950");
  EXPECT_EQ(normalize_arch("sm_90"), "sm_90");
  EXPECT_EQ(normalize_arch(""), "");
}

TEST(DeviceInfo, CpuBuildReportsNoRuntimeWithAReason) {
  const DeviceDetection d = detect_device();
#if !defined(MOE_HAVE_GPU_RUNTIME)
  EXPECT_FALSE(d.runtime_present);
  EXPECT_FALSE(d.device.has_value());
  EXPECT_FALSE(d.message.empty());
#else
  EXPECT_TRUE(d.runtime_present || !d.message.empty());
#endif
}

}  // namespace moe
