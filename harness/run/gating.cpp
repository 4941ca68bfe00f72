#include "harness/run/gating.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace moe {

GateDecision gate(const CaseSpec& c, const KernelUnderTest& k, const DeviceDetection& d, const DeviceRequirement& req) {
  using A = GateDecision::Action;
  if (!c.kernels.empty() && std::find(c.kernels.begin(), c.kernels.end(), k.id()) == c.kernels.end())
    return {A::skip, fmt::format("the case lists kernels [{}], not {}", fmt::join(c.kernels, ", "), k.id())};
  const DeviceInfo* dev = nullptr;
  if (k.needs_device()) {
    if (d.query_failed || (d.device && normalize_arch(d.device->arch_raw).empty()))
      return {A::fail, "a GPU runtime answered but the device could not be identified: " + d.message +
                           " (a detection failure is never a skip)"};
    if (!d.runtime_present || !d.device) {
      const std::string why = d.message.empty() ? std::string("no GPU device") : d.message;
      if (req.required) return {A::fail, "--require-device: " + why};
      return {A::skip, "no GPU: " + why};
    }
    dev = &*d.device;
    if (!req.arch.empty() && dev->arch != req.arch)
      return {A::fail, fmt::format("--require-device {}: the device is {}", req.arch, dev->arch)};
    if (!c.targets.archs.empty() &&
        std::find(c.targets.archs.begin(), c.targets.archs.end(), dev->arch) == c.targets.archs.end())
      return {A::skip, fmt::format("device arch {} not in the case targets [{}]", dev->arch, fmt::join(c.targets.archs, ", "))};
    if (!c.targets.compute_units.empty() &&
        std::find(c.targets.compute_units.begin(), c.targets.compute_units.end(), dev->compute_units) ==
            c.targets.compute_units.end())
      return {A::skip, fmt::format("device has {} CUs, the case targets [{}]", dev->compute_units,
                                   fmt::join(c.targets.compute_units, ", "))};
  }
  const Support s = k.supports(c.problem, dev);
  if (!s.supported && s.no_device && req.required) return {A::fail, "--require-device: " + k.id() + ": " + s.reason};
  if (!s.supported) return {A::skip, k.id() + " does not support this case: " + s.reason};
  return {A::run, ""};
}

}  // namespace moe
