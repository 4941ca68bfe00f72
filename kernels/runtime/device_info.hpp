// What the live GPU is, for gating (docs/reliability.md). Detection always asks the live device, never a build flag.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace moe {

struct DeviceInfo {
  std::string vendor;         // "amd", "nvidia"
  std::string name;           // marketing name from the runtime
  std::string arch;           // normalized: "gfx942", "gfx950", "sm_90"
  std::string arch_raw;       // as the runtime reported it: "gfx942:sramecc+:xnack-"
  int compute_units = 0;      // CUs (AMD) or SMs (NVIDIA)
  std::uint64_t memory_bytes = 0;
  std::string driver_version, runtime_version;
};

struct DeviceDetection {
  bool runtime_present = false;  // a GPU runtime is linked and loaded
  int device_count = 0;
  bool query_failed = false;     // the runtime answered but what the GPU is could not be determined
  std::string message;           // why there is no device, or what failed
  std::optional<DeviceInfo> device;
};

// "gfx942:sramecc+:xnack-" -> "gfx942"; "sm_90a" -> "sm_90a"; "" stays "" (which gating treats as a failure).
std::string normalize_arch(const std::string& raw);

// What detection asks a GPU runtime, in plain C++ types: gpu_runtime.hip answers through HIP (or CUDA through
// hip_compat.hpp); tests answer through a fake ROCm device layer (kernels/runtime/tests/fake_rocm_runtime.hpp), so
// the decisions below are exercised on machines without a GPU.
struct RuntimeAnswer {
  enum class Kind { ok, no_device, failed } kind = Kind::ok;  // no_device: hipErrorNoDevice, hipErrorInsufficientDriver
  std::string error;                                          // the runtime's error string when not ok
};
struct RuntimeProperties {
  std::string name;
  std::string arch_raw;  // AMD: hipDeviceProp_t::gcnArchName ("gfx942:sramecc+:xnack-"); NVIDIA: "sm_" major minor
  int compute_units = 0;
  std::uint64_t memory_bytes = 0;
};
class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  virtual std::string vendor() const = 0;  // "amd", "nvidia"
  virtual RuntimeAnswer device_count(int& count) = 0;
  virtual RuntimeAnswer properties(int device, RuntimeProperties& p) = 0;
  virtual std::string driver_version() = 0;
  virtual std::string runtime_version() = 0;
};

// Device 0 of `rt` (the first visible device: ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES have
// already narrowed what the runtime shows). No device -> runtime_present false with the reason; an error, or an
// architecture that normalizes to "" -> query_failed with the reason (gating fails on it, never skips).
DeviceDetection detect_device(DeviceRuntime& rt);

// The live device (GPU builds query the runtime; CPU-only builds report that no runtime is present).
DeviceDetection detect_device();

}  // namespace moe
