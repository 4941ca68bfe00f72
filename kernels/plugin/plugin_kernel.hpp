// A kernel built outside this repository, loaded from an explicit path through the C ABI of moe_plugin.h and judged
// like any other KernelUnderTest (`moe-harness run --plugin PATH`). Version 1 and 2 tables load; a version 2 table
// with device memory runs through PluginDeviceRunner in GPU builds and is declined, with the reason, in host builds.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "kernels/kernel_under_test.hpp"
#include "kernels/plugin/moe_plugin.h"

namespace moe {

class PluginDeviceRunner;

class PluginKernel : public KernelUnderTest {
 public:
  // dlopen()s `path` (RTLD_NOW | RTLD_LOCAL) and negotiates its ABI (moe_plugin.h): moe_plugin_entry is asked for
  // host_abi_version, then each older one down to MOE_PLUGIN_ABI_MIN_VERSION (a host of an older version is what the
  // tests pass). A missing file, a library that is not a plugin, a version outside that range, a table shorter than
  // its version's or lacking a required field throws moe::Error(bad_input) naming the path, both versions and the fix.
  // Before dlopen, the library is loaded in a probe process (plugin_probe.hpp) unless the caller did so
  // (probed): a load that exits, faults or hangs there is bad input here (make_plugin_kernel makes it an
  // UnloadablePlugin instead).
  explicit PluginKernel(const std::filesystem::path& path, std::uint32_t host_abi_version = MOE_PLUGIN_ABI_VERSION,
                        bool probed = false);
  ~PluginKernel() override;
  std::string id() const override { return api_->id; }
  std::string version() const override { return std::string(api_->version) + " (plugin " + path_.filename().string() + ")"; }
  // A device-memory plugin needs the device in GPU builds; in a host build supports() declines it instead, so that
  // its reason (it needs a GPU build) is what the report says.
  bool needs_device() const override;
  std::uint32_t abi_version() const { return api_->abi_version; }  // the version of the table it returned
  bool device_memory() const { return memory_ == MOE_MEMORY_DEVICE; }
  // A device plugin's uploads of working tensors so far (one per case; 0 in host builds and for host plugins).
  std::size_t device_uploads() const;
  Support supports(const ProblemSpec& p, const DeviceInfo* device) const override;
  void prepare(const ProblemSpec& p, Checkpoint& working) override;
  RunInfo run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing, Tensor& out) override;
  bool deterministic(const ProblemSpec& p) const override;
  // Through the optional moe_plugin_rounding_contract; without it gate_up=f32,slot=f32,reduce=f32 (moe_plugin.h).
  // Text it cannot parse, or a non-zero return, is bad input naming the plugin (the case becomes an error).
  // Version 2: the table's rounding_contract first, then the optional symbol, then that default.
  RoundingContract rounding_contract(const ProblemSpec& p) const override;
  void set_timing(bool on) override { timing_ = on; }
  // A device plugin's case copies are freed and the device lock released.
  void end_case() override;
  // A device plugin's run_device() as device work the harness drives (plugin_device_run.hpp); null otherwise.
  std::unique_ptr<DeviceRun> device_run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing,
                                        std::string& why_not) override;
  // A device plugin's red zones: every buffer handed to run_device() (the working tensors, ids, weights, out) is
  // guarded, and checked after each run (plugin_device_run.hpp); none for a host plugin.
  std::vector<std::string> device_red_zone_violations(std::int64_t& bytes) const override;

 private:
  std::filesystem::path path_;
  void* handle_ = nullptr;
  const moe_plugin_api* api_ = nullptr;
  std::int32_t memory_ = MOE_MEMORY_HOST;  // version 1 tables have no memory field: host
  moe_plugin_rounding_contract_fn rounding_contract_ = nullptr;  // the table's (version 2) or the optional symbol
  bool timing_ = true;
  // Device plugins in GPU builds, created on the first run (shared_ptr: destroyed without its type here, which host
  // builds do not compile).
  std::shared_ptr<PluginDeviceRunner> device_;
};

// What the loader checks before anything of `path` runs: a path (not a bare name, which dlopen would search for)
// to a complete ELF shared object of this machine (plugin_checks.hpp); else bad input naming it.
void check_plugin_path(const std::filesystem::path& path);

// The C view of a problem.
moe_problem to_plugin_problem(const ProblemSpec& p);
std::int32_t to_plugin_dtype(DType t);

}  // namespace moe
