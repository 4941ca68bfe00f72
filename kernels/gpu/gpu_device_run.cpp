#include "kernels/gpu/gpu_device_run.hpp"

#include <cstring>

#include "fixtures/content_seal.hpp"
#include "fixtures/error.hpp"
#include "kernels/moe/fused_moe.hpp"

namespace moe::gpu {
GpuDeviceRun::GpuDeviceRun(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r,
                           ResidentDeviceInputs& resident, Plan plan, std::optional<MutantLaunch> mutant,
                           bool baked_weights)
    : plan_(std::move(plan)),
      buffers_(p, c, input_digests(p, c), resident, r, r.weights, plan_,
               std::size_t(p.tokens * p.hidden) * dtype_size(p.output_dtype)),
      x_(c.x.nbytes(), "device " + c.x.name()),
      mutant_(mutant),
      baked_weights_(baked_weights),
      weights_now_(r.weights),
      staging_(baked_weights ? r.weights.size() * sizeof(float) : 0) {
  if (plan_.launches.size() != 1 || plan_.launches[0].reduce == ReduceMode::per_k)
    throw_harness_error("GpuDeviceRun", "a device run is one launch that writes the output on the device");
  x_.upload(c.x.bytes(), c.x.nbytes());
  if (mutant_) set_fused_moe_mutant(*mutant_);  // now, not under a capture or a held legacy stream
  args_ = buffers_.launch(plan_, 0);
  args_.x = x_.get();
}

void GpuDeviceRun::enqueue(void* stream) {
  const LaunchStreamScope scope(stream);
  if (baked_weights_) {
    std::memcpy(staging_.get(), weights_now_.data(), weights_now_.size() * sizeof(float));
    buffers_.weights.upload_on(stream, staging_.get(), weights_now_.size() * sizeof(float));
  }
  buffers_.acc.zero_on(stream);
  if (mutant_) launch_fused_moe_mutant(args_, plan_.launches[0], *mutant_);
  else launch_fused_moe(args_, plan_.launches[0]);
}

void GpuDeviceRun::write_inputs(const Tensor& x, const RoutingResult& r) {
  if (x.nbytes() != x_.bytes() || r.ids.size() * sizeof(std::int32_t) != buffers_.ids.bytes() ||
      r.weights.size() * sizeof(float) != buffers_.weights.bytes())
    throw_harness_error("GpuDeviceRun", "new inputs must have the shapes the run was made for");
  x_.upload(x.bytes(), x.nbytes());
  buffers_.ids.upload(r.ids.data(), buffers_.ids.bytes());
  buffers_.weights.upload(r.weights.data(), buffers_.weights.bytes());
  weights_now_ = r.weights;
}

std::vector<std::string> GpuDeviceRun::red_zone_violations(std::int64_t& bytes) {
  std::vector<std::string> v;
  buffers_.check_red_zones(v, bytes);
  x_.check(v, bytes);
  return v;
}

}  // namespace moe::gpu
