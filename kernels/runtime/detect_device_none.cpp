// Device detection for builds without a GPU runtime: there is nothing to ask, and the reason says so.
#include "kernels/runtime/device_info.hpp"

namespace moe {

DeviceDetection detect_device() {
  DeviceDetection d;
  d.runtime_present = false;
  d.message = "no GPU runtime in this build (configured without CUDA or HIP)";
  return d;
}

}  // namespace moe
