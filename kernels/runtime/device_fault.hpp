// A sticky GPU error (an illegal memory access, a device-side trap or assert, a hardware exception) leaves the
// context unusable for the rest of the process: every later runtime call fails with it. The GPU error checks
// (gpu_check.hpp) note the first one here; an isolated worker exits after that case (harness/isolation/worker.cpp)
// so that the next case gets a fresh process and context, and in process (--no-isolation) the GPU kernels refuse
// later cases naming it instead of failing each with a confusing second error. Plain C++ (no runtime header), so
// every build has it.
#pragma once
#include <optional>
#include <string>

namespace moe {

inline std::optional<std::string>& sticky_device_error_slot() {
  static std::optional<std::string> first;
  return first;
}
inline void note_sticky_device_error(const std::string& what) {
  if (!sticky_device_error_slot()) sticky_device_error_slot() = what;
}
inline const std::optional<std::string>& sticky_device_error() { return sticky_device_error_slot(); }

}  // namespace moe
