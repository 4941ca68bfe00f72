// The host contract kernel: an independent CPU implementation of the fused-MoE kernel contract, written as a kernel
// would be (expert by expert, each weight row decoded once for the tokens routed to it, one fp32 accumulator per
// output element summed in order, each token's slots reduced in slot order), so the whole pipeline (fixtures,
// gating, judging, reports) runs in CI without a GPU. It stands in for a GPU kernel, so it shares no code with the
// reference engine (reference/): its weight decoding, scale-block indexing, activation quantization order, gated
// activations, accumulation and reduce are its own, so a bug in the reference engine's versions shows up as a
// disagreement.
// What it does share, on purpose, is the specification both implement: the formats/ library (the element codecs,
// the fp8 and MX quantizers that define the activation quantization, the weight format table that says where codes
// and scales are stored) and the fixtures' types (Tensor, the problem, the checkpoint, tensor_element's rounding
// of the output). Those have spec tests of their own (formats/tests, fixtures/tests). Like every kernel under test
// it is handed the reference's routing (RoutingResult, kernels/kernel_under_test.hpp) and computes none.
// It declines, with a reason, cases whose work exceeds its budget, so a nightly run on it finishes in minutes.
#pragma once
#include <memory>
#include <string>

#include "kernels/host/host_kernel_hooks.hpp"
#include "kernels/kernel_under_test.hpp"

namespace moe {

// A host kernel that rounds at more points than the problem it is given names, and what it declares
// (fixtures/rounding_contract.hpp): `rounds` is applied on top of every problem before the kernel's own code runs,
// `declares` is its rounding_contract(). Rounding like vLLM's pipeline and saying so is
// {gate_up=bf16,slot=bf16, gate_up=bf16,slot=bf16}; a kernel that lies declares anything else.
struct HostRounding {
  RoundingContract rounds, declares;
};

class HostContractKernel : public KernelUnderTest {
 public:
  static constexpr double kDefaultFlopBudget = 4e9;
  // hooks: the kernel's named hook points (host_kernel_hooks.hpp); null: the plain ones, the correct kernel.
  // rounding: its extra rounding points and its declaration (none: the case's contract); `id` names the variant.
  explicit HostContractKernel(double flop_budget = kDefaultFlopBudget, std::unique_ptr<HostKernelHooks> hooks = nullptr,
                              HostRounding rounding = {}, std::string id = "host-contract")
      : budget_(flop_budget), hooks_(hooks ? std::move(hooks) : std::make_unique<HostKernelHooks>()),
        rounding_(std::move(rounding)), id_(std::move(id)) {}
  std::string id() const override { return id_; }
  RoundingContract rounding_contract(const ProblemSpec&) const override { return rounding_.declares; }
  std::string version() const override { return "1"; }
  bool needs_device() const override { return false; }
  Support supports(const ProblemSpec& p, const DeviceInfo* device) const override;
  void prepare(const ProblemSpec& p, Checkpoint& working) override {}
  RunInfo run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing, Tensor& out) override;

  static double work_flops(const ProblemSpec& p);

 private:
  double budget_;
  std::unique_ptr<HostKernelHooks> hooks_;
  HostRounding rounding_;
  std::string id_;
};

}  // namespace moe
