// The fused MoE GPU kernels (kernels/moe/fused_moe.hip; bf16/fp16, fp8 and MX weights, quantized activations) as
// a KernelUnderTest: plans the case's launches (kernels/gpu/dispatch_plan.hpp), uploads the working checkpoint and
// the reference routing, poisons each device output with the harness's sentinel before every run, executes the plan,
// reports its variant, and times with device events (warm-up, then the median of repeats). Present in GPU builds
// only (MOE_HAVE_GPU_RUNTIME).
#pragma once
#include "kernels/common/resident_inputs.hpp"
#include "kernels/gpu/dispatch_options.hpp"
#include "kernels/gpu/dispatch_plan.hpp"
#include "kernels/kernel_under_test.hpp"
#include "kernels/mutants/mutation.hpp"
#include "kernels/runtime/gpu_runtime.hpp"

namespace moe {

class GpuFusedMoeKernel : public KernelUnderTest {
 public:
  ~GpuFusedMoeKernel() override;
  // fail_launch_for_test: every run issues an invalid launch first (a test hook proving launch errors are reported
  // with the runtime's message for that case, not a crash).
  explicit GpuFusedMoeKernel(bool fail_launch_for_test = false) : fail_launch_(fail_launch_for_test) {}
  // The run's A/B switches (`run --dispatch`): the plan's rules they turn off or force.
  explicit GpuFusedMoeKernel(const gpu::DispatchOptions& dispatch) : run_dispatch_(dispatch), dispatch_(dispatch) {}
  // An in-kernel mutant (kernels/mutants/mutation.hpp): the kernels' mutant build carrying one bug from the catalog,
  // for the selftest. The input/output mutants are a MutantKernel around the mutant build without a bug.
  explicit GpuFusedMoeKernel(Mutation mutation) : mutation_(mutation), mutant_build_(mutation != Mutation::none) {}
  // The mutant build carrying no bug: the selftest's baseline for whether a mutant changed the output at all. The
  // default build runs some cases on other kernels (matrix instructions, which the mutant build has not), whose
  // summation order differs; against those, a mutant that changes nothing would look live.
  struct MutantBuild {};
  explicit GpuFusedMoeKernel(MutantBuild) : mutant_build_(true) {}
  std::string id() const override {
    if (mutant_build_) return "gpu-fused-moe~" + std::string(mutation_name(mutation_));
    return fail_launch_ ? "gpu-fused-moe-faulty" : "gpu-fused-moe";
  }
  std::string version() const override { return "1"; }
  bool needs_device() const override { return true; }
  Support supports(const ProblemSpec& p, const DeviceInfo* device) const override;
  // The kernel decodes both e4m3 flavours itself, so it converts nothing; a new case releases the device copies of
  // the previous case's inputs.
  void prepare(const ProblemSpec& p, Checkpoint& working) override;
  RunInfo run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing, Tensor& out) override;
  // The kernels keep h, each slot and the top-k sum in fp32 (kernels/moe/), whatever the case names there; the
  // intermediate, the shared path and the output follow the case.
  RoundingContract rounding_contract(const ProblemSpec&) const override { return fp32_stages(); }
  bool deterministic(const ProblemSpec& p) const override { return p.reduce != ReduceMode::fused_atomic; }
  void set_timing(bool on) override { timing_ = on; }
  // The plans the A/B switches can give p, each once ("" first: the rules under the run's switches); a choice is
  // a --dispatch item list ("grouped_mma=off,decode_mma=off") applied over the run's switches.
  std::vector<std::string> dispatch_variants(const ProblemSpec& p) const override;
  void select_dispatch(const std::string& choice) override;
  // The plan's one launch on a stream the harness gives (gpu_device_run.hpp); null for a plan of several launches or
  // per_k slots, which the run sums on the host.
  std::unique_ptr<DeviceRun> device_run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing,
                                        std::string& why_not) override;
  // Every device buffer of a run is guarded (gpu_case_buffers.hpp; the resident inputs too) and checked after the
  // verdict run of each run() call: the violations since the last end_case() (GpuDeviceRun's are its own).
  std::vector<std::string> device_red_zone_violations(std::int64_t& bytes) const override {
    bytes += red_zone_bytes_;
    return red_zones_;
  }
  void end_case() override {
    red_zones_.clear();
    red_zone_bytes_ = 0;
  }
  // Input tensors copied to the device so far (each once per case unless its content changed between runs).
  std::size_t input_uploads() const { return resident_.uploads(); }

 private:
  gpu::BuildCaps build_caps() const;
  // Every constructor first refuses the retired A/B environment variables (dispatch_options.hpp).
  bool env_checked_ = (gpu::refuse_retired_dispatch_env(), true);
  bool fail_launch_ = false;
  gpu::DispatchOptions run_dispatch_;  // the run's switches
  gpu::DispatchOptions dispatch_;      // what plans the next case: the run's switches with the selected choice
  Mutation mutation_ = Mutation::none;
  bool mutant_build_ = false;  // launch_fused_moe_mutant (with mutation_, possibly none) instead of launch_fused_moe
  bool timing_ = true;
  // The device copies of the inputs, kept across run() calls and keyed by content (kernels/common/resident_inputs.hpp).
  // Freed under the device lock by prepare() and the destructor.
  ResidentInputs<gpu::GuardedBuffer> resident_;
  std::vector<std::string> red_zones_;  // guard violations of this case's runs so far
  std::int64_t red_zone_bytes_ = 0;
};

}  // namespace moe
