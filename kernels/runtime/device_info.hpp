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

// The live device (GPU builds query the runtime; CPU-only builds report that no runtime is present).
DeviceDetection detect_device();

}  // namespace moe
