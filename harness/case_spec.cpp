#include "harness/case_spec.hpp"

#include "harness/model_presets.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace moe {
namespace {

// A whole number as such (10), else the shortest %g spelling that reads back as the same float (1.702, 2.5, 1e-06).
std::string num(float v) {
  char b[32];
  if (v == std::floor(v) && std::fabs(v) < 1e9f) {
    std::snprintf(b, sizeof b, "%.0f", double(v));
    return b;
  }
  for (int prec = 1; prec <= 9; ++prec) {
    std::snprintf(b, sizeof b, "%.*g", prec, double(v));
    if (float(std::strtod(b, nullptr)) == v) break;
  }
  return b;
}

}  // namespace

bool is_decode(const ProblemSpec& p) { return p.tokens <= 64; }

std::string quant_short_name(const QuantScheme& q) {
  const WeightFormatInfo& f = weight_format_info(q.weight);
  std::string w = f.id_fragment;
  const bool fp8a = q.act == ActFormat::fp8_token || q.act == ActFormat::fp8_group128;
  if ((f.case_flavor || fp8a) && q.flavor == Fp8Flavor::fnuz) w += "-fnuz";
  switch (q.act) {
    case ActFormat::none: w += ".a16"; break;
    case ActFormat::fp8_token: w += ".tok"; break;
    case ActFormat::fp8_group128: w += ".g128"; break;
    case ActFormat::mxfp8: w += ".mx8"; break;
  }
  if (q.act_qmax > 0) w += "-q" + num(q.act_qmax);
  if (q.act_scale_pow2) w += "-ue8m0";
  if ((q.act == ActFormat::fp8_token || q.act == ActFormat::fp8_group128) && q.act_amax_floor != QuantScheme{}.act_amax_floor)
    w += "-fl" + num(q.act_amax_floor);
  if (is_mx(f) || q.act == ActFormat::mxfp8) {
    w += "-" + std::string(name(q.mx_mode));
    if (q.e8m0_edges == E8m0Edges::triton) w += "-tri";
  }
  return w;
}

std::string canonical_id(const CaseSpec& c) {
  const ProblemSpec& p = c.problem;
  // A preset's name stands for its shape; a custom shape, or a preset whose shape was overridden, spells it out.
  ProblemSpec preset;
  const bool is_preset = apply_model_preset(c.model, preset);
  std::string id = c.model;
  if (!is_preset || preset.hidden != p.hidden || preset.inter != p.inter || preset.experts != p.experts ||
      preset.topk != p.topk || preset.n_shared != p.n_shared || preset.shared_inter != p.shared_inter)
    id += "-h" + std::to_string(p.hidden) + "i" + std::to_string(p.inter) + "e" + std::to_string(p.experts) + "k" +
          std::to_string(p.topk) + (p.n_shared ? "s" + std::to_string(p.n_shared) + "x" + std::to_string(p.shared_inter) : "");
  if (p.routing.kind != preset.routing.kind || !is_preset) id += "-" + std::string(name(p.routing.kind));
  // Routing parameters that differ from the preset's (or, for a custom shape, from the defaults).
  const RoutingSpec want = is_preset ? preset.routing : RoutingSpec{};
  if (p.routing.kind == RoutingKind::grouped_sigmoid &&
      (p.routing.n_group != want.n_group || p.routing.topk_group != want.topk_group))
    id += "-g" + std::to_string(p.routing.n_group) + "of" + std::to_string(p.routing.topk_group);
  if (p.routing.routed_scaling != want.routed_scaling) id += "-rs" + num(p.routing.routed_scaling);
  if (p.routing.renormalize != want.renormalize) id += p.routing.renormalize ? "-renorm" : "-norenorm";
  id += "/tp" + std::to_string(p.tp);
  if (p.ep > 1) id += "/ep" + std::to_string(p.ep) + "r" + std::to_string(p.ep_rank);
  id += "/" + quant_short_name(p.quant);
  if (p.n_shared > 0)
    id += "+sh." + quant_short_name(p.shared_quant) + (p.clamp_shared ? "" : "-noclamp") +
          (p.shared_path == SharedPath::separate ? "-sep" : "");
  id += "/" + std::string(name(p.activation));
  if (p.activation == Activation::swiglu_oai &&
      (p.swiglu_alpha != ProblemSpec{}.swiglu_alpha || p.swiglu_limit != ProblemSpec{}.swiglu_limit))
    id += "-a" + num(p.swiglu_alpha) + "-l" + num(p.swiglu_limit);
  const GateUpLayout natural = p.activation == Activation::swiglu_oai ? GateUpLayout::interleaved : GateUpLayout::gate_up;
  if (p.layout != natural) id += "-" + std::string(name(p.layout));
  if (p.biases) id += "+bias";
  if (p.router_weight_on == RouterWeightOn::input) id += "+win";
  id += "/T" + std::to_string(p.tokens);
  id += is_decode(p) ? "/decode" : "/prefill";
  id += "/" + std::string(name(p.reduce));
  if (p.stage != StageMode::auto_select) id += "/" + std::string(name(p.stage));
  if (p.split_k > 1) id += "/sk" + std::to_string(p.split_k);
  if (p.input_dtype != DType::bf16) id += "/in-" + std::string(dtype_name(p.input_dtype));
  if (p.intermediate != IntermediateDtype::bf16) id += "/mid-" + std::string(name(p.intermediate));
  if (p.output_dtype != DType::bf16) id += "/out-" + std::string(dtype_name(p.output_dtype));
  // The generated data: input distribution and weight scale when not the defaults.
  const DistributionSpec dx = ProblemSpec{}.x_dist;
  if (p.x_dist.kind != dx.kind || p.x_dist.mean != dx.mean || p.x_dist.scale != dx.scale ||
      p.x_dist.outlier_fraction != dx.outlier_fraction || p.x_dist.outlier_scale != dx.outlier_scale)
    id += "/x-" + std::string(p.x_dist.kind == Distribution::normal ? "n" : "u") + num(float(p.x_dist.mean)) + "," +
          num(float(p.x_dist.scale)) +
          (p.x_dist.outlier_fraction != 0.0 ? "-o" + num(float(p.x_dist.outlier_fraction)) + "x" + num(float(p.x_dist.outlier_scale)) : "");
  if (p.weight_std != 0.0f) id += "/wstd" + num(p.weight_std);
  if (c.tier == Tier::exact) id += "/exact";
  if (p.seed != 0) id += "/s" + std::to_string(p.seed);
  if (!c.variant.empty()) id += "/" + c.variant;
  return id;
}

}  // namespace moe
