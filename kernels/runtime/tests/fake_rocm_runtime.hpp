// A fake ROCm device layer for tests on machines without a GPU: a host's GPUs as the HIP runtime would describe them
// (hipDeviceProp_t::gcnArchName with its target features, multiProcessorCount), narrowed by the visibility variables
// by ROCm's documented rules, answering detect_device(DeviceRuntime&) as HIP would.
//   ROCR_VISIBLE_DEVICES  indices among the host's GPUs, or their UUIDs ("GPU-..."), in the order listed
//   HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES (HIP's alias), GPU_DEVICE_ORDINAL
//                         indices among the GPUs ROCr left visible
// As with CUDA_VISIBLE_DEVICES, an entry that names no device ends the list (the entries after it are ignored).
// The tests set at most one of the HIP-level variables, so which of them HIP prefers is not modelled.
// No visible device answers hipErrorNoDevice, as HIP does.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/runtime/device_info.hpp"

namespace moe::testing {

struct FakeGpu {
  std::string uuid;           // as ROCR_VISIBLE_DEVICES may name it: "GPU-<hex>"
  std::string name;           // hipDeviceProp_t::name
  std::string gcn_arch_name;  // hipDeviceProp_t::gcnArchName, e.g. "gfx942:sramecc+:xnack-"
  int compute_units = 0;      // hipDeviceProp_t::multiProcessorCount
  std::uint64_t memory_bytes = 0;
};

using Env = std::map<std::string, std::string>;  // the visibility variables that are set

class FakeRocmRuntime final : public DeviceRuntime {
 public:
  FakeRocmRuntime(std::vector<FakeGpu> host, Env env) : host_(std::move(host)), visible_(visible_of(host_, env)) {}

  // Scripted runtime failures: the answer hipGetDeviceCount / hipGetDeviceProperties give instead of the devices.
  std::optional<RuntimeAnswer> count_failure, properties_failure;

  // The host indices HIP shows, in HIP's device order.
  const std::vector<int>& visible() const { return visible_; }

  std::string vendor() const override { return "amd"; }
  RuntimeAnswer device_count(int& count) override {
    if (count_failure) return *count_failure;
    count = int(visible_.size());
    if (count == 0) return {RuntimeAnswer::Kind::no_device, "hipErrorNoDevice: no ROCm-capable device is detected"};
    return {};
  }
  RuntimeAnswer properties(int device, RuntimeProperties& p) override {
    if (properties_failure) return *properties_failure;
    if (device < 0 || device >= int(visible_.size())) return {RuntimeAnswer::Kind::failed, "hipErrorInvalidDevice"};
    const FakeGpu& g = host_[std::size_t(visible_[std::size_t(device)])];
    p.name = g.name;
    p.arch_raw = g.gcn_arch_name;
    p.compute_units = g.compute_units;
    p.memory_bytes = g.memory_bytes;
    return {};
  }
  std::string driver_version() override { return "60342131"; }
  std::string runtime_version() override { return "60342131"; }

 private:
  static std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string t; std::getline(in, t, ',');) out.push_back(t);
    return out;
  }
  static bool is_index(const std::string& t) {
    return !t.empty() && t.size() < 9 && t.find_first_not_of("0123456789") == std::string::npos;
  }
  static std::vector<int> visible_of(const std::vector<FakeGpu>& host, const Env& env) {
    std::vector<int> rocr;
    if (auto it = env.find("ROCR_VISIBLE_DEVICES"); it != env.end()) {
      for (const std::string& t : split(it->second)) {
        int found = -1;
        if (is_index(t)) {
          if (std::stoi(t) < int(host.size())) found = std::stoi(t);
        } else {
          for (std::size_t i = 0; i < host.size(); ++i)
            if (host[i].uuid == t) found = int(i);
        }
        if (found < 0) break;
        rocr.push_back(found);
      }
    } else {
      for (std::size_t i = 0; i < host.size(); ++i) rocr.push_back(int(i));
    }
    for (const char* var : {"HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"}) {
      auto it = env.find(var);
      if (it == env.end()) continue;
      std::vector<int> hip;
      for (const std::string& t : split(it->second)) {
        if (!is_index(t) || std::stoi(t) >= int(rocr.size())) break;
        hip.push_back(rocr[std::size_t(std::stoi(t))]);
      }
      return hip;
    }
    return rocr;
  }

  std::vector<FakeGpu> host_;
  std::vector<int> visible_;
};

// Parts as AMD's specifications describe them: MI300X (gfx942, 304 CUs), MI308X (gfx942, 80 CUs), MI355X (gfx950,
// 256 CUs), MI250X GCD (gfx90a, 110 CUs). gcnArchName carries the target features as ROCm reports them.
inline FakeGpu mi300x(int i) {
  return {"GPU-3000000000000" + std::to_string(i), "AMD Instinct MI300X", "gfx942:sramecc+:xnack-", 304, 192ull << 30};
}
inline FakeGpu mi308x(int i) {
  return {"GPU-3080000000000" + std::to_string(i), "AMD Instinct MI308X", "gfx942:sramecc+:xnack-", 80, 192ull << 30};
}
inline FakeGpu mi355x(int i) {
  return {"GPU-3550000000000" + std::to_string(i), "AMD Instinct MI355X", "gfx950:sramecc+:xnack-", 256, 288ull << 30};
}
inline FakeGpu mi250x(int i) {
  return {"GPU-2500000000000" + std::to_string(i), "AMD Instinct MI250X", "gfx90a:sramecc+:xnack-", 110, 64ull << 30};
}

}  // namespace moe::testing
