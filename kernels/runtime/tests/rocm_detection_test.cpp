// The ROCm side of device detection, on the CPU through the fake device layer (fake_rocm_runtime.hpp): what
// detect_device(DeviceRuntime&) makes of the HIP runtime's answers, and which GPU it reports under the visibility
// variables ci/gpu-shard sets. Expected values come from ROCm: the target ID format (processor, then ":feature+" or
// ":feature-"; the arch is the processor), AMD's CU counts, the documented ROCR_/HIP_VISIBLE_DEVICES rules.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/tests/fake_rocm_runtime.hpp"

namespace moe {
namespace {
using testing::Env;
using testing::FakeGpu;
using testing::FakeRocmRuntime;
using K = RuntimeAnswer::Kind;

DeviceDetection detect_one(const FakeGpu& g) {
  FakeRocmRuntime rt({g}, {});
  return detect_device(rt);
}

TEST(RocmDetection, Mi300xTargetIdWithFeaturesIsArchGfx942With304Cus) {
  const DeviceDetection d = detect_one(testing::mi300x(0));
  ASSERT_TRUE(d.device.has_value());
  EXPECT_TRUE(d.runtime_present);
  EXPECT_FALSE(d.query_failed);
  EXPECT_EQ(d.device_count, 1);
  EXPECT_EQ(d.device->vendor, "amd");
  EXPECT_EQ(d.device->arch_raw, "gfx942:sramecc+:xnack-");
  EXPECT_EQ(d.device->arch, "gfx942");
  EXPECT_EQ(d.device->compute_units, 304);
  EXPECT_EQ(d.message, "AMD Instinct MI300X (gfx942)");
}

TEST(RocmDetection, Mi308xIsGfx942With80Cus) {
  const DeviceDetection d = detect_one(testing::mi308x(0));
  ASSERT_TRUE(d.device.has_value());
  EXPECT_EQ(d.device->arch, "gfx942");
  EXPECT_EQ(d.device->compute_units, 80);
}

TEST(RocmDetection, EveryFeatureSettingOfATargetIsTheSameArch) {
  // LLVM AMDGPU target IDs: the processor, then each supported feature as ":name+" (on) or ":name-" (off), or
  // absent (any); ROCm's gcnArchName is the device's target ID.
  for (const char* raw : {"gfx942", "gfx942:sramecc+:xnack-", "gfx942:sramecc-:xnack+", "gfx942:xnack+", "gfx942:sramecc+"}) {
    FakeGpu g = testing::mi300x(0);
    g.gcn_arch_name = raw;
    const DeviceDetection d = detect_one(g);
    ASSERT_TRUE(d.device.has_value()) << raw;
    EXPECT_EQ(d.device->arch, "gfx942") << raw;
    EXPECT_EQ(d.device->arch_raw, raw);
    EXPECT_FALSE(d.query_failed) << raw;
  }
  EXPECT_EQ(detect_one(testing::mi355x(0)).device->arch, "gfx950");
  EXPECT_EQ(detect_one(testing::mi250x(0)).device->arch, "gfx90a");
}

TEST(RocmDetection, EmptyArchIsAQueryFailureThatNamesTheDevice) {
  for (const char* raw : {"", ":sramecc+:xnack-", " "}) {
    FakeGpu g = testing::mi300x(0);
    g.gcn_arch_name = raw;
    const DeviceDetection d = detect_one(g);
    EXPECT_TRUE(d.runtime_present) << "'" << raw << "'";
    EXPECT_TRUE(d.query_failed) << "'" << raw << "'";
    EXPECT_NE(d.message.find("empty architecture"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("AMD Instinct MI300X"), std::string::npos) << d.message;
  }
}

TEST(RocmDetection, RuntimeErrorsAreQueryFailuresWithTheRuntimesText) {
  FakeRocmRuntime count_fails({testing::mi300x(0)}, {});
  count_fails.count_failure = RuntimeAnswer{K::failed, "hipGetDeviceCount: hipErrorNotInitialized"};
  DeviceDetection d = detect_device(count_fails);
  EXPECT_TRUE(d.runtime_present);
  EXPECT_TRUE(d.query_failed);
  EXPECT_FALSE(d.device.has_value());
  EXPECT_NE(d.message.find("hipErrorNotInitialized"), std::string::npos) << d.message;

  FakeRocmRuntime props_fail({testing::mi300x(0)}, {});
  props_fail.properties_failure = RuntimeAnswer{K::failed, "hipGetDeviceProperties: hipErrorInvalidDevice"};
  d = detect_device(props_fail);
  EXPECT_TRUE(d.runtime_present);
  EXPECT_TRUE(d.query_failed);
  EXPECT_FALSE(d.device.has_value());
  EXPECT_NE(d.message.find("hipErrorInvalidDevice"), std::string::npos) << d.message;
}

TEST(RocmDetection, NoDeviceIsNoRuntimeWithTheReasonNotAFailure) {
  FakeRocmRuntime rt({}, {});
  const DeviceDetection d = detect_device(rt);
  EXPECT_FALSE(d.runtime_present);
  EXPECT_FALSE(d.query_failed);
  EXPECT_FALSE(d.device.has_value());
  EXPECT_NE(d.message.find("no ROCm-capable device"), std::string::npos) << d.message;
}

// An 8-GPU host of different parts, so the part detection reports names the host GPU it is.
std::vector<FakeGpu> mixed_host() {
  return {testing::mi300x(0), testing::mi308x(1), testing::mi300x(2), testing::mi355x(3),
          testing::mi250x(4), testing::mi308x(5), testing::mi300x(6), testing::mi355x(7)};
}

void expect_host_gpu(const DeviceDetection& d, int host_index, const std::string& what) {
  const FakeGpu g = mixed_host()[std::size_t(host_index)];
  ASSERT_TRUE(d.device.has_value()) << what << ": " << d.message;
  EXPECT_EQ(d.device_count, 1) << what;
  EXPECT_EQ(d.device->name, g.name) << what;
  EXPECT_EQ(d.device->arch_raw, g.gcn_arch_name) << what;
  EXPECT_EQ(d.device->compute_units, g.compute_units) << what;
}

TEST(RocmDetection, VisibilityVariablesPickTheHostGpuByRocmsRules) {
  // ROCr's list indexes the host; HIP's indexes what ROCr left.
  FakeRocmRuntime narrowed(mixed_host(), {{"ROCR_VISIBLE_DEVICES", "4,5,6,7"}, {"HIP_VISIBLE_DEVICES", "2,3"}});
  const DeviceDetection d = detect_device(narrowed);
  ASSERT_TRUE(d.device.has_value());
  EXPECT_EQ(d.device_count, 2);
  EXPECT_EQ(d.device->name, "AMD Instinct MI300X");  // host GPU 6
  FakeRocmRuntime by_uuid(mixed_host(), {{"ROCR_VISIBLE_DEVICES", mixed_host()[3].uuid}});
  expect_host_gpu(detect_device(by_uuid), 3, "ROCR_VISIBLE_DEVICES by UUID");
  // The mistake ci/gpu-shard avoids: the same id in both lists leaves no GPU for any shard but shard 0.
  FakeRocmRuntime both(mixed_host(), {{"ROCR_VISIBLE_DEVICES", "5"}, {"HIP_VISIBLE_DEVICES", "5"}});
  const DeviceDetection none = detect_device(both);
  EXPECT_FALSE(none.device.has_value());
  EXPECT_FALSE(none.runtime_present);
  EXPECT_FALSE(none.query_failed);
}

// Runs ci/gpu-shard for the CTest allocation `gpu_id` with the inherited `env` and an executable that prints the
// visibility variables it was given; returns them.
Env gpu_shard_env(int gpu_id, const Env& inherited) {
  namespace fs = std::filesystem;
  char tmpl[] = "/tmp/moe-rocm-shard-XXXXXX";
  const fs::path dir = mkdtemp(tmpl);
  const fs::path printer = dir / "print-visibility";
  std::ofstream(printer) << "#!/usr/bin/env bash\n"
                            "for v in ROCR_VISIBLE_DEVICES HIP_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES GPU_DEVICE_ORDINAL; do\n"
                            "  if [[ -n \"${!v+set}\" ]]; then echo \"$v=${!v}\"; fi\ndone\n";
  fs::permissions(printer, fs::perms::owner_all);
  std::string cmd = "env -u ROCR_VISIBLE_DEVICES -u HIP_VISIBLE_DEVICES -u CUDA_VISIBLE_DEVICES -u GPU_DEVICE_ORDINAL "
                    "MOE_GPU_PLATFORM=rocm CTEST_RESOURCE_GROUP_0_GPUS=id:" + std::to_string(gpu_id) + ",slots:1";
  for (const auto& [k, v] : inherited) cmd += " " + k + "=" + v;
  cmd += " bash " MOE_SOURCE_ROOT "/ci/gpu-shard " + printer.string() + " 0 1 " + (dir / "report").string();
  Env out;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 512> line{};
  while (p && fgets(line.data(), int(line.size()), p)) {
    std::string s(line.data());
    if (!s.empty() && s.back() == '\n') s.pop_back();
    const auto eq = s.find('=');
    if (eq != std::string::npos) out[s.substr(0, eq)] = s.substr(eq + 1);
  }
  EXPECT_TRUE(p && pclose(p) == 0) << cmd;
  fs::remove_all(dir);
  return out;
}

TEST(RocmDetection, GpuShardMakesTheAllocatedHostGpuDevice0) {
  // (CTest's GPU id, what the job inherited, the host GPU the shard must see): ci/gpu-shard's header and the
  // ROCm rules above.
  struct Case {
    int id;
    Env inherited;
    int host_gpu;
  };
  const std::vector<Case> cases = {
      {5, {}, 5},
      {1, {}, 1},
      {5, {{"HIP_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"}, {"CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"}}, 5},
      {1, {{"ROCR_VISIBLE_DEVICES", "4,5,6,7"}}, 5},
      {1, {{"ROCR_VISIBLE_DEVICES", mixed_host()[2].uuid + "," + mixed_host()[3].uuid}}, 3},
      {1, {{"ROCR_VISIBLE_DEVICES", "4,5,6,7"}, {"HIP_VISIBLE_DEVICES", "2,3"}}, 7},
  };
  for (const Case& c : cases) {
    const Env env = gpu_shard_env(c.id, c.inherited);
    std::string what = "GPU id " + std::to_string(c.id) + ", env:";
    for (const auto& [k, v] : env) what += " " + k + "=" + v;
    FakeRocmRuntime rt(mixed_host(), env);
    expect_host_gpu(detect_device(rt), c.host_gpu, what);
  }
}

}  // namespace
}  // namespace moe
