#include "kernels/gpu/launch_args.hpp"

#include "fixtures/error.hpp"

namespace moe::gpu {

DType io_dtype(DType d) {
  if (d == DType::bf16 || d == DType::f16 || d == DType::f32) return d;
  throw_harness_error("io_dtype", "dtype " + std::string(dtype_name(d)) + " is no kernel input or output type");
}

DType io_dtype(IntermediateDtype d) {
  switch (d) {
    case IntermediateDtype::bf16: return DType::bf16;
    case IntermediateDtype::f16: return DType::f16;
    case IntermediateDtype::f32: return DType::f32;
  }
  throw_harness_error("io_dtype", "unknown intermediate dtype");
}

namespace {

ActQuant act_quant(const QuantScheme& q) {
  ActQuant a;
  a.kind = q.act;
  a.fnuz = q.flavor == Fp8Flavor::fnuz;
  a.qmax = q.act_qmax > 0 ? q.act_qmax : (a.fnuz ? 240.0f : 448.0f);
  a.amax_floor = q.act_amax_floor;
  a.scale_pow2 = q.act_scale_pow2;
  a.mx_mode = q.mx_mode;
  a.e8m0_triton = q.e8m0_edges == E8m0Edges::triton;
  return a;
}

ExpertSet expert_set(const QuantScheme& q, std::int64_t inter, bool clamp) {
  ExpertSet s;
  s.inter = inter;
  s.clamp = clamp;
  s.wfmt = q.weight;
  s.e8m0_triton = q.e8m0_edges == E8m0Edges::triton;
  s.aq = act_quant(q);
  return s;
}

}  // namespace

FusedMoeArgs case_args(const ProblemSpec& p) {
  FusedMoeArgs a;
  a.tokens = p.tokens;
  a.hidden = p.hidden;
  a.topk = p.topk;
  a.n_shared = p.ep_rank == 0 ? p.n_shared : 0;
  a.first_local_expert = p.first_local_expert();
  a.local_experts = p.local_experts();
  a.in_type = io_dtype(p.input_dtype);
  a.mid_type = io_dtype(p.intermediate);
  a.out_type = io_dtype(p.output_dtype);
  a.act = p.activation;
  a.layout = p.layout;
  a.alpha = p.swiglu_alpha;
  a.limit = p.swiglu_limit;
  a.weight_on_input = p.router_weight_on == RouterWeightOn::input;
  a.routed = expert_set(p.quant, p.local_inter(), true);
  a.shared = expert_set(p.shared_quant, p.n_shared ? p.local_shared_inter() : 0, p.clamp_shared);
  a.reduce = p.reduce;
  return a;
}

FusedMoeArgs launch_args(const FusedMoeArgs& whole, const LaunchPlan& launch) {
  FusedMoeArgs a = whole;
  a.reduce = launch.reduce;
  switch (launch.sets) {
    case LaunchSets::routed_and_shared: break;
    case LaunchSets::routed: a.n_shared = 0; break;
    case LaunchSets::shared:
      a.topk = 0;
      a.local_experts = 0;
      a.first_local_expert = 0;
      a.routed = whole.shared;
      break;
  }
  return a;
}

}  // namespace moe::gpu
