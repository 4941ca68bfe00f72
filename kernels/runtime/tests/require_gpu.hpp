// For GoogleTest tests that need the GPU: the live device, detected once, and REQUIRE_GPU(), which skips the test
// saying why when there is no GPU and fails it when a runtime answered but could not identify the device (gating
// never turns that into a skip, docs/reliability.md "Gating: skip or fail").
#pragma once
#include <gtest/gtest.h>

#include "kernels/runtime/device_info.hpp"

namespace moe::testing_gpu {

inline const DeviceDetection& device() {
  static const DeviceDetection d = detect_device();
  return d;
}

}  // namespace moe::testing_gpu

#define REQUIRE_GPU()                                                                                             \
  do {                                                                                                            \
    if (::moe::testing_gpu::device().query_failed)                                                                \
      FAIL() << "GPU runtime answered but: " << ::moe::testing_gpu::device().message;                             \
    if (!::moe::testing_gpu::device().device) GTEST_SKIP() << "no GPU: " << ::moe::testing_gpu::device().message; \
  } while (0)
