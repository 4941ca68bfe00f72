#include "kernels/runtime/device_info.hpp"

#include <cctype>

namespace moe {

std::string normalize_arch(const std::string& raw) {
  std::string s;
  for (char c : raw) {
    if (c == ':') break;  // target features (sramecc, xnack) are not part of the arch
    if (!std::isspace(static_cast<unsigned char>(c))) s += char(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

DeviceDetection detect_device(DeviceRuntime& rt) {
  DeviceDetection d;
  int count = 0;
  const RuntimeAnswer c = rt.device_count(count);
  if (c.kind == RuntimeAnswer::Kind::no_device) {
    d.message = "GPU runtime present but no usable device: " + c.error;
    return d;
  }
  d.runtime_present = true;
  if (c.kind == RuntimeAnswer::Kind::failed) {
    d.query_failed = true;
    d.message = "the device count query failed: " + c.error;
    return d;
  }
  d.device_count = count;
  if (count <= 0) {
    d.runtime_present = false;
    d.message = "GPU runtime present but it reports 0 devices";
    return d;
  }
  RuntimeProperties p;
  const RuntimeAnswer pe = rt.properties(0, p);
  if (pe.kind != RuntimeAnswer::Kind::ok) {
    d.query_failed = true;
    d.message = "the device properties query failed: " + pe.error;
    return d;
  }
  DeviceInfo info;
  info.vendor = rt.vendor();
  info.name = p.name;
  info.arch_raw = p.arch_raw;
  info.arch = normalize_arch(p.arch_raw);
  info.compute_units = p.compute_units;
  info.memory_bytes = p.memory_bytes;
  info.driver_version = rt.driver_version();
  info.runtime_version = rt.runtime_version();
  d.device = info;
  if (info.arch.empty()) {
    d.query_failed = true;
    d.message = "the runtime reported an empty architecture for device 0 (" + info.name + ", arch '" +
                info.arch_raw + "')";
  } else {
    d.message = info.name + " (" + info.arch + ")";
  }
  return d;
}

}  // namespace moe
