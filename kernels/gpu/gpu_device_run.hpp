// The GPU kernel's DeviceRun (kernels/kernel_under_test.hpp; the device probes, docs/judging.md "Streams and graph
// replay"): one case's device buffers, allocated once, with x, the routing ids and the router weights in buffers of
// its own (the kernel's resident copies of x stay what their digests say), and the plan's one launch enqueued on the
// stream given. Holds the device lock for its lifetime. GPU builds only (MOE_HAVE_GPU_RUNTIME).
#pragma once
#include <optional>
#include <vector>

#include "kernels/gpu/gpu_case_buffers.hpp"
#include "kernels/kernel_under_test.hpp"
#include "kernels/mutants/gpu_mutant_launch.hpp"
#include "kernels/runtime/device_lock.hpp"

namespace moe::gpu {

class GpuDeviceRun final : public DeviceRun {
 public:
  // plan: one launch that writes the output on the device (no per_k slots, no separate shared output). mutant: the
  // mutant build's bug, when the kernel is one. baked_weights (the graph_baked_inputs mutant): enqueue() uploads the
  // router weights from a pinned host copy it fills then, so a graph replays the capture's values.
  GpuDeviceRun(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r, ResidentDeviceInputs& resident,
               Plan plan, std::optional<MutantLaunch> mutant, bool baked_weights);
  void enqueue(void* stream) override;
  void write_inputs(const Tensor& x, const RoutingResult& routing) override;
  void* output() const override { return buffers_.outs[0].get(); }
  // Its buffers' guards (x, the routing, the work buffers, the output; the resident weights are the kernel's).
  std::vector<std::string> red_zone_violations(std::int64_t& bytes) override;

 private:
  DeviceLockGuard lock_;  // first: released after every buffer is freed
  Plan plan_;
  CaseBuffers buffers_;
  GuardedBuffer x_;
  FusedMoeArgs args_;
  std::optional<MutantLaunch> mutant_;
  bool baked_weights_;
  std::vector<float> weights_now_;  // the router weights last written (baked_weights: what enqueue() copies)
  HostPinned staging_;
};

}  // namespace moe::gpu
