#include "kernels/gpu/launch_args.hpp"

#include "fixtures/error.hpp"

namespace moe::gpu {

ElemType elem_type(DType d) {
  switch (d) {
    case DType::bf16: return ElemType::bf16;
    case DType::f16: return ElemType::f16;
    case DType::f32: return ElemType::f32;
    default: break;
  }
  throw_harness_error("elem_type", "dtype " + std::string(dtype_name(d)) + " is no kernel input or output type");
}

ElemType elem_type(IntermediateDtype d) {
  switch (d) {
    case IntermediateDtype::bf16: return ElemType::bf16;
    case IntermediateDtype::f16: return ElemType::f16;
    case IntermediateDtype::f32: return ElemType::f32;
  }
  throw_harness_error("elem_type", "unknown intermediate dtype");
}

ActKind act_kind(Activation a) {
  switch (a) {
    case Activation::silu: return ActKind::silu;
    case Activation::gelu_tanh: return ActKind::gelu_tanh;
    case Activation::gelu_erf: return ActKind::gelu_erf;
    case Activation::swiglu_oai: return ActKind::swiglu_oai;
  }
  throw_harness_error("act_kind", "unknown activation");
}

LayoutKind layout_kind(GateUpLayout l) {
  switch (l) {
    case GateUpLayout::gate_up: return LayoutKind::gate_up;
    case GateUpLayout::up_gate: return LayoutKind::up_gate;
    case GateUpLayout::interleaved: return LayoutKind::interleaved;
  }
  throw_harness_error("layout_kind", "unknown gate/up layout");
}

ReduceKind reduce_kind(ReduceMode r) {
  switch (r) {
    case ReduceMode::fused_atomic: return ReduceKind::fused_atomic;
    case ReduceMode::separate: return ReduceKind::separate;
    case ReduceMode::per_k: return ReduceKind::per_k;
  }
  throw_harness_error("reduce_kind", "unknown reduce mode");
}

WFormat wformat(WeightFormat w) {
  switch (w) {
    case WeightFormat::bf16: return WFormat::bf16;
    case WeightFormat::fp16: return WFormat::f16;
    case WeightFormat::fp8_tensor: return WFormat::fp8_tensor;
    case WeightFormat::fp8_channel: return WFormat::fp8_channel;
    case WeightFormat::fp8_block: return WFormat::fp8_block;
    case WeightFormat::mxfp8: return WFormat::mxfp8;
    case WeightFormat::mxfp4: return WFormat::mxfp4;
  }
  throw_harness_error("wformat", "unknown weight format");
}

AQuant aquant(ActFormat a) {
  switch (a) {
    case ActFormat::none: return AQuant::none;
    case ActFormat::fp8_token: return AQuant::fp8_token;
    case ActFormat::fp8_group128: return AQuant::fp8_group128;
    case ActFormat::mxfp8: return AQuant::mxfp8;
  }
  throw_harness_error("aquant", "unknown activation format");
}

MxMode mx_mode(MxScaleMode m) {
  switch (m) {
    case MxScaleMode::floor: return MxMode::floor;
    case MxScaleMode::rceil: return MxMode::rceil;
    case MxScaleMode::even: return MxMode::even;
  }
  throw_harness_error("mx_mode", "unknown MX scale mode");
}

namespace {

ActQuant act_quant(const QuantScheme& q) {
  ActQuant a;
  a.kind = aquant(q.act);
  a.fnuz = q.flavor == Fp8Flavor::fnuz;
  a.qmax = q.act_qmax > 0 ? q.act_qmax : (a.fnuz ? 240.0f : 448.0f);
  a.amax_floor = q.act_amax_floor;
  a.scale_pow2 = q.act_scale_pow2;
  a.mx_mode = mx_mode(q.mx_mode);
  a.e8m0_triton = q.e8m0_edges == E8m0Edges::triton;
  return a;
}

ExpertSet expert_set(const QuantScheme& q, std::int64_t inter, bool clamp) {
  ExpertSet s;
  s.inter = inter;
  s.clamp = clamp;
  s.wfmt = wformat(q.weight);
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
  a.in_type = elem_type(p.input_dtype);
  a.mid_type = elem_type(p.intermediate);
  a.out_type = elem_type(p.output_dtype);
  a.act = act_kind(p.activation);
  a.layout = layout_kind(p.layout);
  a.alpha = p.swiglu_alpha;
  a.limit = p.swiglu_limit;
  a.weight_on_input = p.router_weight_on == RouterWeightOn::input;
  a.routed = expert_set(p.quant, p.local_inter(), true);
  a.shared = expert_set(p.shared_quant, p.n_shared ? p.local_shared_inter() : 0, p.clamp_shared);
  a.reduce = reduce_kind(p.reduce);
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
