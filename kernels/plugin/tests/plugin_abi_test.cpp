// Plugin ABI negotiation (kernels/plugin/moe_plugin.h): a host of version 2 loads a plugin that answers only
// version 1; a plugin serving both gives a version 1 host its version 1 table and a version 2 host its version 2
// table (with the rounding contract the table carries); tables of a newer version, shorter than their version's,
// with an unknown memory kind or a device plugin without run_device are refused with both numbers named; a device
// plugin is declined in a host build because it needs a GPU build. The expected sizes and texts come from the
// header's definitions and the plugins' sources (kernels/plugin/tests/abi_plugin.c), not from the loader.
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "fixtures/error.hpp"
#include "kernels/plugin/plugin_kernel.hpp"

namespace moe {
namespace {

std::string lib(const std::string& name) { return std::string(MOE_PLUGIN_TEST_DIR) + "/lib" + name + ".so"; }
std::string abi(const std::string& mode) { return lib("moe_test_plugin_abi_" + mode); }

// The loader's message for a refused plugin ("" if it loaded).
std::string refusal(const std::string& path, std::uint32_t host = MOE_PLUGIN_ABI_VERSION) {
  try {
    PluginKernel k(path, host);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input) << e.what();
    return e.what();
  }
  return "";
}

ProblemSpec problem() {
  ProblemSpec p;
  p.tokens = 2, p.hidden = 64, p.inter = 64, p.experts = 4, p.topk = 2;
  return p;
}

TEST(PluginAbi, HeaderVersions) {
  EXPECT_EQ(MOE_PLUGIN_ABI_VERSION, 2u);
  EXPECT_EQ(MOE_PLUGIN_ABI_MIN_VERSION, 1u);
  // Version 1's table: two uint32, two strings, four function pointers, no padding on LP64.
  EXPECT_EQ(MOE_PLUGIN_API_V1_SIZE, 8 + 6 * sizeof(void*));
  EXPECT_GT(MOE_PLUGIN_API_V2_SIZE, MOE_PLUGIN_API_V1_SIZE);
}

TEST(PluginAbi, VersionTwoHostLoadsAPluginThatAnswersOnlyVersionOne) {
  PluginKernel k(abi("v1_only"));
  EXPECT_EQ(k.abi_version(), 1u);
  EXPECT_FALSE(k.device_memory());
  EXPECT_FALSE(k.needs_device());
  EXPECT_EQ(k.id(), "abi-plugin");
  // Version 1 keeps the optional symbol: the example's exports gate_up=f32,slot=f32,reduce=f32.
  EXPECT_EQ(k.rounding_contract(problem()), parse_rounding_contract_or_throw("gate_up=f32,slot=f32,reduce=f32", "test", "x"));
}

TEST(PluginAbi, PluginServingBothGivesEachHostItsVersion) {
  PluginKernel v1(abi("both"), 1);
  EXPECT_EQ(v1.abi_version(), 1u);
  EXPECT_EQ(v1.version().substr(0, 3), "1.0");
  EXPECT_EQ(v1.rounding_contract(problem()), fp32_stages());  // no symbol, no table field in version 1
  PluginKernel v2(abi("both"));
  EXPECT_EQ(v2.abi_version(), 2u);
  EXPECT_EQ(v2.version().substr(0, 3), "2.0");
  EXPECT_FALSE(v2.device_memory());
  EXPECT_EQ(v2.rounding_contract(problem()), parse_rounding_contract_or_throw("gate_up=bf16,slot=bf16,reduce=f32", "test", "x"));
}

TEST(PluginAbi, VersionOneHostGetsNullFromAVersionTwoOnlyPlugin) {
  const std::string why = refusal(lib("moe_example_plugin"), 1);
  EXPECT_NE(why.find("the plugin declined ABI version 1 (moe_plugin_entry returned NULL for each)"), std::string::npos) << why;
  EXPECT_EQ(refusal(lib("moe_example_plugin")), "");
}

TEST(PluginAbi, RefusalsNameBothVersions) {
  std::string why = refusal(abi("newer"));
  EXPECT_NE(why.find("plugin ABI version 3 but this harness speaks versions 1 to 2"), std::string::npos) << why;
  why = refusal(abi("newer"), 1);
  EXPECT_NE(why.find("plugin ABI version 3 but this harness speaks version 1"), std::string::npos) << why;
  why = refusal(lib("moe_test_plugin_wrong_abi"));
  EXPECT_NE(why.find("plugin ABI version 999 but this harness speaks versions 1 to 2"), std::string::npos) << why;
}

TEST(PluginAbi, WrongStructSizeIsRefused) {
  const std::string why = refusal(abi("short"));
  EXPECT_NE(why.find(fmt::format("the plugin's table is {} bytes, version 2 needs {}", MOE_PLUGIN_API_V1_SIZE,
                                 MOE_PLUGIN_API_V2_SIZE)), std::string::npos) << why;
}

TEST(PluginAbi, IncompleteVersionTwoTablesAreRefused) {
  std::string why = refusal(abi("bad_memory"));
  EXPECT_NE(why.find("the plugin's memory is 7, neither MOE_MEMORY_HOST (0) nor MOE_MEMORY_DEVICE (1)"), std::string::npos) << why;
  why = refusal(abi("device_no_run"));
  EXPECT_NE(why.find("declares device memory but lacks run_device"), std::string::npos) << why;
}

TEST(PluginAbi, DevicePluginNeedsAGpuBuild) {
  PluginKernel k(abi("device"));
  EXPECT_EQ(k.abi_version(), 2u);
  EXPECT_TRUE(k.device_memory());
  const Support s = k.supports(problem(), nullptr);
#ifdef MOE_HAVE_GPU_RUNTIME
  EXPECT_TRUE(k.needs_device());
  EXPECT_TRUE(s.supported) << s.reason;
#else
  EXPECT_FALSE(k.needs_device());  // so that gating reaches supports() and reports its reason
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("needs a GPU build of moe-harness"), std::string::npos) << s.reason;
#endif
}

}  // namespace
}  // namespace moe
