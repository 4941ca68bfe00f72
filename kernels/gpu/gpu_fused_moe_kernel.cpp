#include "kernels/gpu/gpu_fused_moe_kernel.hpp"

#include <algorithm>
#include <optional>

#include "fixtures/content_seal.hpp"
#include "fixtures/error.hpp"
#include "kernels/common/output_sums.hpp"
#include "kernels/common/throughput.hpp"
#include "kernels/gpu/dispatch_plan.hpp"
#include "kernels/gpu/gpu_case_buffers.hpp"
#include "kernels/gpu/gpu_device_run.hpp"
#include "kernels/gpu/gpu_mutant_hooks.hpp"
#include "kernels/gpu/launch_args.hpp"
#include "kernels/moe/mma_decode.hpp"
#include "kernels/moe/mma_stages.hpp"
#include "kernels/runtime/device_fault.hpp"
#include "kernels/runtime/device_lock.hpp"

namespace moe {
namespace {

// What the launches of one plan need to run again (the timed repeats). A mutant kernel's launches go to the mutant
// build with the bug beside the arguments.
struct Launches {
  const gpu::Plan* plan;
  std::vector<gpu::FusedMoeArgs> args;
  gpu::GuardedBuffer* acc;
  std::optional<gpu::MutantLaunch> mutant;
  void launch(const gpu::FusedMoeArgs& a, const gpu::LaunchPlan& lp) const {
    if (mutant) gpu::launch_fused_moe_mutant(a, lp, *mutant);
    else gpu::launch_fused_moe(a, lp);
  }
  void run() const {
    for (std::size_t i = 0; i < args.size(); ++i) {
      acc->zero();
      launch(args[i], plan->launches[i]);
    }
  }
};

}  // namespace

GpuFusedMoeKernel::~GpuFusedMoeKernel() {
  if (!resident_.holds_any()) return;
  try {
    const DeviceLockGuard device_lock;  // freeing is device work too
    resident_.clear();
  } catch (...) {
    resident_.clear();  // the supervisor is gone (the worker is exiting): nobody else's work to overlap
  }
}

void GpuFusedMoeKernel::prepare(const ProblemSpec&, Checkpoint&) {
  if (!resident_.holds_any()) return;
  const DeviceLockGuard device_lock;
  resident_.clear();
}

Support GpuFusedMoeKernel::supports(const ProblemSpec& p, const DeviceInfo*) const {
  const bool quant_act = p.quant.act != ActFormat::none || (p.n_shared > 0 && p.shared_quant.act != ActFormat::none);
  if (quant_act && p.stage == StageMode::one_stage)
    return Support::no("one-stage with quantized activations is not implemented: the stage-1 intermediate is "
                       "quantized between two stages");
  if (p.stage == StageMode::one_stage &&
      std::max(p.local_inter(), p.n_shared ? p.local_shared_inter() : 0) > gpu::kOneStageMaxInter)
    return Support::no("one-stage kernel holds the intermediate in shared memory: local inter above " +
                       std::to_string(gpu::kOneStageMaxInter));
  if (p.split_k > 1) return Support::no("split-K is not implemented by this kernel");
  // The device's slot sort (kernels/moe/) groups a token's slots by expert id and assumes distinct ids in [0, E).
  if (p.routing.edge == RoutingEdge::duplicate_id || p.routing.edge == RoutingEdge::masked_ids)
    return Support::no("routing edge " + std::string(name(p.routing.edge)) +
                       " is not implemented: the slot sort assumes each token's ids distinct and in [0, experts)");
  if (p.act_gate_dtype != IntermediateDtype::f32)
    return Support::no("the contract point act_gate is not implemented: the activation is fused, act(g) * u in fp32");
  if (p.router_weight_at != RouterWeightAt::slot)
    return Support::no("the contract point weight=finalize is not implemented: the router weight is in the epilogue");
  for (const QuantScheme* q : {&p.quant, &p.shared_quant})
    if (q->act_scale_op != ActScaleOp::divide)
      return Support::no("the contract point token_scale/group_scale=reciprocal is not implemented: codes are x / s");
  for (const QuantScheme* q : {&p.quant, &p.shared_quant})
    if (q->act_scale_form != ActScaleForm::divide)
      return Support::no("the contract point token_scale_form/group_scale_form=qmax_reciprocal is not implemented: "
                         "s = amax / qmax");
  for (const QuantScheme* q : {&p.quant, p.n_shared ? &p.shared_quant : nullptr})
    if (q && !gpu::has_device_decoder(q->weight))
      return Support::no("weight format " + std::string(name(q->weight)) + " has no GPU decoder");
  return Support::yes();
}

std::vector<std::string> GpuFusedMoeKernel::dispatch_variants(const ProblemSpec& p) const {
  if (mutant_build_) return {""};  // the mutant build has one path per case
  return gpu::distinct_dispatch_choices(p, {gpu::grouped_mma_built(), gpu::decode_mma_built()}, run_dispatch_);
}

void GpuFusedMoeKernel::select_dispatch(const std::string& choice) {
  dispatch_ = gpu::parse_dispatch_options(gpu::split_dispatch_choice(choice), run_dispatch_);
}

gpu::BuildCaps GpuFusedMoeKernel::build_caps() const {
  return mutant_build_ ? gpu::BuildCaps{}  // the mutants live in the other kernels
                       : gpu::BuildCaps{gpu::grouped_mma_built(), gpu::decode_mma_built()};
}

std::unique_ptr<DeviceRun> GpuFusedMoeKernel::device_run(const ProblemSpec& p, const Checkpoint& c,
                                                         const RoutingResult& r, std::string& why_not) {
  gpu::Plan plan = gpu::plan(p, build_caps(), dispatch_);
  if (plan.launches.size() != 1 || plan.launches[0].reduce == ReduceMode::per_k) {
    why_not = plan.launches.size() != 1 ? "the plan has " + std::to_string(plan.launches.size()) +
                                              " launches whose outputs are added on the host (shared_path: separate)"
                                        : "reduce per_k: the slots are summed on the host, after the device work";
    return nullptr;
  }
  if (fail_launch_) {
    why_not = "the test hook's invalid launch";
    return nullptr;
  }
  std::optional<gpu::MutantLaunch> mutant;
  if (mutant_build_) mutant = gpu::mutant_launch(mutation_, p, c, r);
  return std::make_unique<gpu::GpuDeviceRun>(p, c, r, resident_, std::move(plan), mutant,
                                             mutation_ == Mutation::graph_baked_inputs);
}

RunInfo GpuFusedMoeKernel::run(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r, Tensor& out) {
  if (const auto& lost = sticky_device_error())  // in process only: an isolated worker has exited by now
    throw_harness_error("gpu-fused-moe", "the GPU context was lost in an earlier case (" + *lost +
                                             "): every GPU call of this process fails from here on",
                        "run without --no-isolation: each case after such a fault then gets a fresh process");
  const gpu::Plan plan = gpu::plan(p, build_caps(), dispatch_);
  // The inputs' content digests, read on the host before the lock: a resident copy is reused only for equal content.
  const std::vector<std::uint64_t> digests = gpu::input_digests(p, c);
  // Host-side work before the lock: the sentinel the device outputs start as (so an element the kernel never writes
  // comes back as the sentinel) and the host buffers per_k launches download their slots into.
  const Tensor sentinel = out.clone("sentinel");
  std::optional<Tensor> shared_out;
  if (plan.separate_shared()) shared_out = sentinel.clone("shared_out");
  std::vector<std::vector<float>> slots(plan.launches.size());
  std::vector<std::pair<int, int>> sets(plan.launches.size());  // each per_k launch's (routed, shared) slots per token
  for (std::size_t i = 0; i < plan.launches.size(); ++i) {
    if (plan.launches[i].reduce != ReduceMode::per_k) continue;
    const gpu::FusedMoeArgs a = gpu::launch_args(gpu::case_args(p), plan.launches[i]);
    sets[i] = {a.topk, a.n_shared};
    slots[i].resize(std::size_t(p.tokens * (a.topk + a.n_shared) * p.hidden));
  }
  RunInfo info;
  info.variant = gpu::variant(plan);
  {
    // Held from the first upload to the last timed repeat and until the device buffers are freed (declared before
    // them), and only that: another worker's GPU work never overlaps this case's (kernels/runtime/device_lock.hpp),
    // and no host-side sum, copy or judging runs while the other workers wait.
    const DeviceLockGuard device_lock;
    gpu::CaseBuffers b(p, c, digests, resident_, r, r.weights, plan, out.nbytes());
    Launches launches{&plan, {}, &b.acc, std::nullopt};
    if (mutant_build_) launches.mutant = gpu::mutant_launch(mutation_, p, c, r);
    for (std::size_t i = 0; i < plan.launches.size(); ++i) launches.args.push_back(b.launch(plan, i));
    // The verdict run: each launch's output downloaded into its host tensor, or (per_k) its slots into a host buffer.
    for (std::size_t i = 0; i < plan.launches.size(); ++i) {
      b.outs[i].upload(sentinel.bytes(), sentinel.nbytes());
      b.acc.zero();
      gpu::FusedMoeArgs verdict = launches.args[i];
      verdict.fail_launch_for_test = fail_launch_;
      launches.launch(verdict, plan.launches[i]);
      gpu::synchronize();
      Tensor& dst = i == 0 ? out : *shared_out;
      if (plan.launches[i].reduce != ReduceMode::per_k) {
        b.outs[i].download(dst.bytes(), dst.nbytes());
        continue;
      }
      b.slots.download(slots[i].data(), slots[i].size() * sizeof(float));
    }
    // The verdict run's writes out of bounds (the timed repeats below run the same launches again).
    b.check_red_zones(red_zones_, red_zone_bytes_);
    resident_.for_each([&](gpu::GuardedBuffer& in) { in.check(red_zones_, red_zone_bytes_); });
    info.upload_s = b.upload_s;
    if (timing_) {
      info.median_us = gpu::time_median_us([](void* v) { static_cast<const Launches*>(v)->run(); }, &launches, 2, 5);
      info.timed_repeats = 5;
    }
  }
  // After the lock: per_k's slots summed in order on the harness side, the separate shared path added, throughput.
  for (std::size_t i = 0; i < plan.launches.size(); ++i) {
    if (plan.launches[i].reduce != ReduceMode::per_k) continue;
    const auto [routed, shared] = sets[i];
    sum_slots_in_order(slots[i], routed + shared, local_slots(p, r, routed, shared), i == 0 ? out : *shared_out);
  }
  if (shared_out) add_separate_shared(out, *shared_out, sentinel);
  if (timing_) add_throughput(info, moe_work(p, c, r));
  return info;
}

}  // namespace moe
