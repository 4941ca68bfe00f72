// Whether a (case, kernel) runs here (docs/reliability.md). Uses the live device detection, never a build flag.
//   no GPU runtime or no device    -> SKIP with that reason; FAIL when the run requires a device
//   runtime answers, arch unknown  -> FAIL (never a skip: "cannot tell what the GPU is" hides broken runners)
//   arch / CU not in case targets  -> SKIP naming the detected and the wanted values
//   kernel declines the case       -> SKIP with the kernel's reason
#pragma once
#include <string>

#include "harness/case/case_spec.hpp"
#include "kernels/kernel_under_test.hpp"
#include "kernels/runtime/device_info.hpp"

namespace moe {

struct GateDecision {
  enum class Action { run, skip, fail } action = Action::run;
  std::string reason;
};

struct DeviceRequirement {
  bool required = false;
  std::string arch;  // optional: the device must also be this arch
};

GateDecision gate(const CaseSpec& c, const KernelUnderTest& k, const DeviceDetection& d, const DeviceRequirement& req);

}  // namespace moe
