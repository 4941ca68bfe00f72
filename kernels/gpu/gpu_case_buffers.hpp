// The device memory one run() works in: the checkpoint's inputs (x, each expert set's weights, biases and scales)
// taken from the kernel's resident copies (kernels/common/resident_inputs.hpp: uploaded only when their content
// changed), the routing's ids and the router weights given (uploaded every run: the probes change the weights), the
// work buffers its plan needs, one output per launch, and the whole case's launch arguments pointing into them.
// Every one of them is a GuardedBuffer (gpu_runtime.hpp): check_red_zones() reads its guards after a run, so a launch
// writing out of bounds of any of them is named (the red_zones probe). GPU builds only (MOE_HAVE_GPU_RUNTIME).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "kernels/common/resident_inputs.hpp"
#include "kernels/gpu/dispatch_plan.hpp"
#include "kernels/runtime/gpu_runtime.hpp"
#include "reference/routing/routing.hpp"

namespace moe::gpu {

// The checkpoint tensors a run reads, in the resident slots' order; an empty tensor for the shared set of a case
// without one.
inline constexpr std::size_t kInputSlots = 13;
std::array<const Tensor*, kInputSlots> input_tensors(const ProblemSpec& p, const Checkpoint& c);

// Their content digests (chunk_digests), x's also over the bytes its allocation holds past the view: a token probe's
// x holds poisoned padding rows past T there (harness/pipeline/token_probes.hpp), which x's device copy holds too.
std::vector<std::uint64_t> input_digests(const ProblemSpec& p, const Checkpoint& c);

using ResidentDeviceInputs = ResidentInputs<GuardedBuffer>;
// A guarded device copy of `t`, named "device <its name>" in a violation; with `tail`, of every byte of its
// allocation from the view on (t.capacity(): x's padding rows past T in a probe's run), else of the view alone.
GuardedBuffer upload_guarded(const Tensor& t, bool tail = false);

struct CaseBuffers {
  // digests: input_digests(p, working), computed by the caller (off the device lock). router_weights:
  // [T, k], the routing's or (a mutant) what the kernel is handed instead. out_bytes: the output's.
  CaseBuffers(const ProblemSpec& p, const Checkpoint& working, const std::vector<std::uint64_t>& digests,
              ResidentDeviceInputs& resident, const RoutingResult& r, const std::vector<float>& router_weights,
              const Plan& plan, std::size_t out_bytes);
  // Launch i of the plan: its sets and reduce mode (launch_args), writing outs[i].
  FusedMoeArgs launch(const Plan& plan, std::size_t i) const;
  // The guards of every buffer above (not the resident inputs, which the kernel checks itself), after the run's work
  // was waited for: violations appended, changed bytes added to `bytes`.
  void check_red_zones(std::vector<std::string>& violations, std::int64_t& bytes);

  FusedMoeArgs whole;     // case_args(p) with every pointer and each set's fnuz filled in
  double upload_s = 0.0;  // seconds the constructor spent copying to the device (the resident inputs that changed)
  GuardedBuffer ids, weights;
  GuardedBuffer mid, slots, acc, xq_routed, xq_shared, sort;
  std::vector<GuardedBuffer> outs;  // one per launch: the routed (or only) output, then the separate shared one
};

}  // namespace moe::gpu
