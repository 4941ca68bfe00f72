// A kernel built outside this repository, loaded from an explicit path through the C ABI of moe_plugin.h and judged
// like any other KernelUnderTest (`moe-harness run --plugin PATH`).
#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include "kernels/kernel_under_test.hpp"
#include "kernels/plugin/moe_plugin.h"

namespace moe {

class PluginKernel : public KernelUnderTest {
 public:
  // dlopen()s `path` (RTLD_NOW | RTLD_LOCAL) and checks its ABI. A missing file, a library that is not a plugin,
  // another ABI version or an incomplete table throws moe::Error(bad_input) naming the path and the fix.
  explicit PluginKernel(const std::filesystem::path& path);
  ~PluginKernel() override;
  std::string id() const override { return api_->id; }
  std::string version() const override { return std::string(api_->version) + " (plugin " + path_.filename().string() + ")"; }
  bool needs_device() const override { return false; }
  Support supports(const ProblemSpec& p, const DeviceInfo* device) const override;
  void prepare(const ProblemSpec& p, Checkpoint& working) override;
  RunInfo run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing, Tensor& out) override;
  bool deterministic(const ProblemSpec& p) const override;
  // Through the optional moe_plugin_rounding_contract; without it gate_up=f32,slot=f32,reduce=f32 (moe_plugin.h).
  // Text it cannot parse, or a non-zero return, is bad input naming the plugin (the case becomes an error).
  RoundingContract rounding_contract(const ProblemSpec& p) const override;

 private:
  std::filesystem::path path_;
  void* handle_ = nullptr;
  const moe_plugin_api* api_ = nullptr;
  moe_plugin_rounding_contract_fn rounding_contract_ = nullptr;  // optional symbol
};

// The C view of a problem.
moe_problem to_plugin_problem(const ProblemSpec& p);
std::int32_t to_plugin_dtype(DType t);

}  // namespace moe
