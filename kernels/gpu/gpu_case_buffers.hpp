// The device memory one case runs in: its inputs uploaded (x, the routing's ids, the router weights given, each
// expert set's weights, biases and scales), the work buffers its plan needs, one output per launch, and the whole
// case's launch arguments pointing into them. GPU builds only (MOE_HAVE_GPU_RUNTIME).
#pragma once
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "kernels/gpu/dispatch_plan.hpp"
#include "kernels/runtime/gpu_runtime.hpp"
#include "reference/routing/routing.hpp"

namespace moe::gpu {

struct CaseBuffers {
  // router_weights: [T, k], the routing's or (a mutant) what the kernel is handed instead. out_bytes: the output's.
  CaseBuffers(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& r,
              const std::vector<float>& router_weights, const Plan& plan, std::size_t out_bytes);
  // Launch i of the plan: its sets and reduce mode (launch_args), writing outs[i].
  FusedMoeArgs launch(const Plan& plan, std::size_t i) const;

  FusedMoeArgs whole;  // case_args(p) with every pointer and each set's fnuz filled in
  DeviceBuffer x, ids, weights, w13, w2, b13, b2, s13, s2, sw13, sw2, sb13, sb2, ss13, ss2;
  DeviceBuffer mid, slots, acc, xq_routed, xq_shared, sort;
  std::vector<DeviceBuffer> outs;  // one per launch: the routed (or only) output, then the separate shared one
};

}  // namespace moe::gpu
