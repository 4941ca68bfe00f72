// The host contract kernel: an independent CPU implementation of the fused-MoE kernel contract, written as a kernel
// would be (token-major, one weight row at a time, fp32 accumulation), with its own loops and none of the reference
// engine's code, so the whole pipeline (fixtures, gating, judging, reports) runs in CI without a GPU.
// It declines, with a reason, cases whose work exceeds its budget, so a nightly run on it finishes in minutes.
#pragma once
#include <memory>

#include "kernels/host/host_kernel_hooks.hpp"
#include "kernels/kernel_under_test.hpp"

namespace moe {

class HostContractKernel : public KernelUnderTest {
 public:
  static constexpr double kDefaultFlopBudget = 4e9;
  // hooks: the kernel's named hook points (host_kernel_hooks.hpp); null: the plain ones, the correct kernel.
  explicit HostContractKernel(double flop_budget = kDefaultFlopBudget, std::unique_ptr<HostKernelHooks> hooks = nullptr)
      : budget_(flop_budget), hooks_(hooks ? std::move(hooks) : std::make_unique<HostKernelHooks>()) {}
  std::string id() const override { return "host-contract"; }
  std::string version() const override { return "1"; }
  bool needs_device() const override { return false; }
  Support supports(const ProblemSpec& p, const DeviceInfo* device) const override;
  void prepare(const ProblemSpec& p, Checkpoint& working) override {}
  RunInfo run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing, Tensor& out) override;

  static double work_flops(const ProblemSpec& p);

 private:
  double budget_;
  std::unique_ptr<HostKernelHooks> hooks_;
};

}  // namespace moe
