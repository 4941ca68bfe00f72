#include "harness/case_json.hpp"

#include <nlohmann/json.hpp>

namespace moe {
namespace {
nlohmann::ordered_json quant_json(const QuantScheme& q) {
  return {{"weight", name(q.weight)}, {"act", name(q.act)}, {"flavor", name(q.flavor)}, {"qmax", q.act_qmax},
          {"scale_pow2", q.act_scale_pow2}, {"mx_mode", name(q.mx_mode)}, {"e8m0_edges", name(q.e8m0_edges)},
          {"amax_floor", q.act_amax_floor}};
}
}  // namespace

std::string case_to_json_text(const CaseSpec& c) {
  const ProblemSpec& p = c.problem;
  nlohmann::ordered_json j;
  j["id"] = c.id;
  j["model"] = c.model;
  j["source"] = c.source;
  j["tier"] = c.tier == Tier::exact ? "exact" : "statistical";
  j["shape"] = {{"hidden", p.hidden}, {"inter", p.inter}, {"local_inter", p.local_inter()}, {"experts", p.experts},
                {"local_experts", p.local_experts()}, {"first_local_expert", p.first_local_expert()},
                {"topk", p.topk}, {"n_shared", p.n_shared}, {"shared_inter", p.shared_inter},
                {"local_shared_inter", p.local_shared_inter()}, {"tp", p.tp}, {"ep", p.ep}, {"ep_rank", p.ep_rank},
                {"tokens", p.tokens}};
  j["routing"] = {{"kind", name(p.routing.kind)}, {"renormalize", p.routing.renormalize},
                  {"n_group", p.routing.n_group}, {"topk_group", p.routing.topk_group},
                  {"routed_scaling", p.routing.routed_scaling}, {"router_weight_on", name(p.router_weight_on)},
                  {"tie_break", "lower expert index"}};
  j["activation"] = {{"kind", name(p.activation)}, {"layout", name(p.layout)}, {"swiglu_alpha", p.swiglu_alpha},
                     {"swiglu_limit", p.swiglu_limit}, {"clamp_shared", p.clamp_shared}, {"biases", p.biases}};
  j["quant"] = quant_json(p.quant);
  j["shared_quant"] = quant_json(p.shared_quant);
  j["dtypes"] = {{"input", dtype_name(p.input_dtype)}, {"intermediate", name(p.intermediate)},
                 {"output", dtype_name(p.output_dtype)}};
  j["execution"] = {{"stage", name(p.stage)}, {"reduce", name(p.reduce)}, {"split_k", p.split_k},
                    {"shared_path", name(p.shared_path)}};
  j["seed"] = p.seed;
  j["input_distribution"] = {{"kind", p.x_dist.kind == Distribution::normal ? "normal" : "uniform"},
                             {"mean", p.x_dist.mean}, {"std", p.x_dist.scale},
                             {"outlier_fraction", p.x_dist.outlier_fraction}, {"outlier_scale", p.x_dist.outlier_scale}};
  j["targets"] = {{"arch", c.targets.archs}, {"cu", c.targets.compute_units}};
  j["tags"] = c.tags;
  j["kernels"] = c.kernels;
  return j.dump(1) + "\n";
}

}  // namespace moe
