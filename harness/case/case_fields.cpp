#include "harness/case/case_fields.hpp"

#include <fmt/format.h>
#include <map>
#include <tuple>

#include "fixtures/rounding_contract.hpp"

#include "harness/case/case_field_kinds.hpp"
#include "harness/isolation/case_limits.hpp"
#include "harness/case/model_presets.hpp"
#include "harness/case/case_thresholds.hpp"

namespace moe {
namespace fields {
namespace {

constexpr std::int64_t kBig = std::int64_t(1) << 40;
using P = ProblemSpec;
using Json = nlohmann::ordered_json;

std::string str(std::int64_t v) { return std::to_string(v); }
GateUpLayout natural_layout(Activation a) {
  return a == Activation::swiglu_oai ? GateUpLayout::interleaved : GateUpLayout::gate_up;
}

// Fragments of the id that spell several keys at once, and the condition under which they appear.
bool shape_shown(const CaseSpec& c, const IdBase& b) {
  const P &p = c.problem, &m = b.preset;
  return !b.is_preset || m.hidden != p.hidden || m.inter != p.inter || m.experts != p.experts || m.topk != p.topk ||
         m.n_shared != p.n_shared || m.shared_inter != p.shared_inter;
}
bool groups_shown(const CaseSpec& c, const IdBase& b) {
  const RoutingSpec &r = c.problem.routing, &m = b.preset.routing;
  return r.kind == RoutingKind::grouped_sigmoid && (r.n_group != m.n_group || r.topk_group != m.topk_group);
}
bool swiglu_shown(const CaseSpec& c, const IdBase&) {
  const P& p = c.problem;
  return p.activation == Activation::swiglu_oai && (p.swiglu_alpha != P{}.swiglu_alpha || p.swiglu_limit != P{}.swiglu_limit);
}
bool input_shown(const CaseSpec& c, const IdBase&) {
  const DistributionSpec &x = c.problem.x_dist, d = P{}.x_dist;
  return x.kind != d.kind || x.mean != d.mean || x.scale != d.scale || x.outlier_fraction != d.outlier_fraction ||
         x.outlier_scale != d.outlier_scale;
}
bool outliers_shown(const CaseSpec& c, const IdBase& b) {
  return input_shown(c, b) && c.problem.x_dist.outlier_fraction != 0.0;
}

void read_model(const CaseField&, const Reader& r, const CaseNode& v, CaseSpec& c) {
  c.model = r.string(v, "model");
  if (!apply_model_preset(c.model, c.problem))
    r.fail(v.mark(), "model", "unknown model preset '" + printable(c.model) + "'",
           "use one of: " + model_preset_names() + ", or omit model and give the shape");
}
void read_variant(const CaseField&, const Reader& r, const CaseNode& v, CaseSpec& c) {
  c.variant = r.string(v, "variant", 64);
  if (c.variant.empty() ||
      c.variant.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") != std::string::npos)
    r.fail(v.mark(), "variant", "'" + printable(c.variant) + "' is not an id suffix",
           "use 1 to 64 letters, digits and . _ + - (it is the last part of the case id)");
}
void read_tier(const CaseField&, const Reader& r, const CaseNode& v, CaseSpec& c) {
  const std::string t = r.string(v, "tier");
  if (t != "statistical" && t != "exact")
    r.fail(v.mark(), "tier", "unknown tier '" + printable(t) + "'", "use statistical or exact");
  c.tier = t == "exact" ? Tier::exact : Tier::statistical;
}
void read_distribution(const CaseField&, const Reader& r, const CaseNode& v, CaseSpec& c) {
  const std::string d = r.string(v, "input.distribution");
  if (d != "normal" && d != "uniform")
    r.fail(v.mark(), "input.distribution", "unknown distribution '" + printable(d) + "'", "use normal or uniform");
  c.problem.x_dist.kind = d == "normal" ? Distribution::normal : Distribution::uniform;
}
// The watchdog's time limit for the case (harness/isolation/case_limits.hpp): not part of the problem, so neither in
// the id nor in case.json.
void read_timeout(const CaseField&, const Reader& r, const CaseNode& v, CaseSpec& c) {
  const double s = r.number(v, "timeout_s");
  if (!(s > 0 && s <= kMaxCaseTimeoutS))
    r.fail(v.mark(), "timeout_s", fmt::format("{:g} is not a time limit in (0, {:g}] seconds", s, kMaxCaseTimeoutS),
           "give the case's time limit in seconds, e.g. 600");
  c.timeout_s = s;
}
// A CU count or a list of them.
void read_cu(const CaseField& f, const Reader& r, const CaseNode& v, CaseSpec& c) {
  const YAML::Node& cu = r.value(v, f.key, "a list of CU counts");
  if (!cu.IsScalar() && !cu.IsSequence()) r.fail(cu.Mark(), f.key, "expected a CU count or a list of them", "write [80, 304]");
  if (cu.IsScalar()) c.targets.compute_units.push_back(int(r.integer(cu, f.key, f.lo, f.hi)));
  else for (const auto& e : cu) c.targets.compute_units.push_back(int(r.integer(e, f.key, f.lo, f.hi)));
}

// The rounding points no other key sets (fixtures/rounding_contract.hpp), in the contract's text form; the other
// three have their keys (intermediate, shared_path, output_dtype), the amax floors theirs (quant.amax_floor,
// shared_quant.amax_floor): one way to set each.
void read_rounding_contract(const CaseField& f, const Reader& r, const CaseNode& v, CaseSpec& c) {
  const std::string text = r.string(v, f.key, 256);
  const RoundingContractParse parsed = parse_rounding_contract(text);
  if (!parsed.contract) r.fail(v.mark(), f.key, "'" + printable(text) + "': " + parsed.problem, parsed.fix);
  const RoundingContract& k = *parsed.contract;
  for (const auto& [named, point, key] : {std::tuple{k.act.has_value(), "act", "intermediate"},
                                          std::tuple{k.shared.has_value(), "shared", "shared_path"},
                                          std::tuple{k.output.has_value(), "output", "output_dtype"},
                                          std::tuple{k.token_floor.has_value(), "token_floor", "quant.amax_floor"},
                                          std::tuple{k.group_floor.has_value(), "group_floor", "quant.amax_floor"}})
    if (named)
      r.fail(v.mark(), f.key, std::string("the point ") + point + " has its own key",
             std::string("write it as the case key ") + key +
                 ", and gate_up, act_gate, slot, reduce, token_scale_form, group_scale_form, token_scale, "
                 "group_scale, weight and accum here");
  c.problem = with_contract(c.problem, k);
}
std::string rounding_fragment(const P& p) {
  std::string s;
  for (const auto& [d, tag] : {std::pair{p.gate_up_dtype, "/gu-"}, std::pair{p.slot_dtype, "/slot-"},
                               std::pair{p.reduce_dtype, "/sum-"}})
    if (d != IntermediateDtype::f32) s += tag + std::string(name(d));
  const RoundingContract k = without_defaults(contract_of(p));
  if (k.token_scale_form) s += "/tokform-" + std::string(name(*k.token_scale_form));
  if (k.group_scale_form) s += "/grpform-" + std::string(name(*k.group_scale_form));
  if (k.token_scale) s += "/tok-" + std::string(name(*k.token_scale));
  if (k.group_scale) s += "/grp-" + std::string(name(*k.group_scale));
  if (k.weight) s += "/w-" + std::string(name(*k.weight));
  if (k.act_gate) s += "/ag-" + std::string(name(*k.act_gate));
  if (k.accum) s += "/acc-" + (k.accum->bits >= 24 ? std::string("f32") : "mma" + std::to_string(k.accum->bits));
  return s;
}

// Quantization keys, the same for the routed (`quant`) and the shared experts (`shared_quant`).
template <auto Q>
void add_quant(std::vector<CaseField>& t, const std::string& m, Id id, decltype(CaseField::after) after) {
  using Q_ = QuantScheme;
  t.push_back(preset(mapping(m, true, id, after)));
  t.push_back(preset(choice<InProblem<Q, &Q_::weight>>(m + ".weight", m + ".weight")));
  t.push_back(preset(choice<InProblem<Q, &Q_::act>>(m + ".act", m + ".act")));
  t.push_back(choice<InProblem<Q, &Q_::flavor>>(m + ".flavor", m + ".flavor"));
  t.push_back(number<InProblem<Q, &Q_::act_qmax>>(m + ".qmax", m + ".qmax"));
  t.push_back(boolean<InProblem<Q, &Q_::act_scale_pow2>>(m + ".scale_pow2", m + ".scale_pow2"));
  t.push_back(choice<InProblem<Q, &Q_::mx_mode>>(m + ".mx_mode", m + ".mx_mode"));
  t.push_back(choice<InProblem<Q, &Q_::e8m0_edges>>(m + ".e8m0_edges", m + ".e8m0_edges"));
  t.push_back(number<InProblem<Q, &Q_::act_amax_floor>>(m + ".amax_floor", m + ".amax_floor"));
}

// An id fragment: its place in the id and its text, from the case `c` (problem `p`) and the preset's problem `b`.
#define ID(order, ...) \
  Id{order, [](const CaseSpec& c, const IdBase& b) -> std::string { const P& p = c.problem; (void)p; (void)b; return __VA_ARGS__; }}
// A case.json value computed from the case `c` (problem `p`).
#define JSON(...) [](const CaseSpec& c, Json& j) { const P& p = c.problem; (void)p; j = __VA_ARGS__; }

std::vector<CaseField> table() {
  using R = RoutingSpec;
  using X = DistributionSpec;
  using T = ToleranceOverride;
  std::vector<CaseField> t = {
      derived("id", JSON(c.id)),
      custom("model", "model", false, &read_model, JSON(c.model), ID(10, c.model)),
      custom("variant", "", false, &read_variant, nullptr, ID(150, c.variant.empty() ? "" : "/" + c.variant)),
      derived("source", JSON(c.source)),
      custom("tier", "tier", false, &read_tier, JSON(c.tier == Tier::exact ? "exact" : "statistical"),
             ID(130, c.tier == Tier::exact ? "/exact" : "")),
      // A preset's name stands for its shape; a custom shape, or a preset whose shape was overridden, spells it.
      preset(integer<InProblem<&P::hidden>>("hidden", "shape.hidden", 1, kBig,
                                            ID(20, shape_shown(c, b) ? "-h" + str(p.hidden) : ""))),
      preset(integer<InProblem<&P::inter>>("inter", "shape.inter", 1, kBig,
                                           ID(21, shape_shown(c, b) ? "i" + str(p.inter) : ""))),
      derived("shape.local_inter", JSON(p.local_inter())),
      preset(integer<InProblem<&P::experts>>("experts", "shape.experts", 1, 1 << 20,
                                             ID(22, shape_shown(c, b) ? "e" + str(p.experts) : ""))),
      derived("shape.local_experts", JSON(p.local_experts())),
      derived("shape.first_local_expert", JSON(p.first_local_expert())),
      preset(integer<InProblem<&P::topk>>("topk", "shape.topk", 1, 1 << 20,
                                          ID(23, shape_shown(c, b) ? "k" + str(p.topk) : ""))),
      preset(integer<InProblem<&P::n_shared>>("n_shared", "shape.n_shared", 0, 64,
                                              ID(24, shape_shown(c, b) && p.n_shared ? "s" + str(p.n_shared) : ""))),
      preset(integer<InProblem<&P::shared_inter>>("shared_inter", "shape.shared_inter", 0, kBig,
                                                  ID(25, shape_shown(c, b) && p.n_shared ? "x" + str(p.shared_inter) : ""))),
      derived("shape.local_shared_inter", JSON(p.local_shared_inter())),
      integer<InProblem<&P::tp>>("tp", "shape.tp", 1, 1024, ID(40, "/tp" + str(p.tp))),
      integer<InProblem<&P::ep>>("ep", "shape.ep", 1, 1024, ID(41, p.ep > 1 ? "/ep" + str(p.ep) : "")),
      integer<InProblem<&P::ep_rank>>("ep_rank", "shape.ep_rank", 0, 1023, ID(42, p.ep > 1 ? "r" + str(p.ep_rank) : "")),
      integer<InProblem<&P::tokens>>("tokens", "shape.tokens", 1, 1 << 24,
                                     ID(80, "/T" + str(p.tokens) + (is_decode(p) ? "/decode" : "/prefill"))),
      // Routing parameters show where they differ from the preset's (for a custom shape: from the defaults).
      preset(mapping("routing", true)),
      preset(choice<InProblem<&P::routing, &R::kind>>(
          "routing.kind", "routing.kind",
          ID(30, p.routing.kind != b.preset.routing.kind || !b.is_preset ? "-" + std::string(name(p.routing.kind)) : ""))),
      preset(boolean<InProblem<&P::routing, &R::renormalize>>(
          "routing.renormalize", "routing.renormalize",
          ID(34, p.routing.renormalize == b.preset.routing.renormalize ? "" : p.routing.renormalize ? "-renorm" : "-norenorm"))),
      preset(integer<InProblem<&P::routing, &R::n_group>>("routing.n_group", "routing.n_group", 1, 1 << 16,
                                                          ID(31, groups_shown(c, b) ? "-g" + str(p.routing.n_group) : ""))),
      preset(integer<InProblem<&P::routing, &R::topk_group>>("routing.topk_group", "routing.topk_group", 1, 1 << 16,
                                                             ID(32, groups_shown(c, b) ? "of" + str(p.routing.topk_group) : ""))),
      preset(number<InProblem<&P::routing, &R::routed_scaling>>(
          "routing.routed_scaling", "routing.routed_scaling",
          ID(33, p.routing.routed_scaling != b.preset.routing.routed_scaling ? "-rs" + id_number(p.routing.routed_scaling) : ""))),
      preset(choice<InProblem<&P::routing, &R::edge>>(
          "routing.edge", "routing.edge",
          ID(35, p.routing.edge != RoutingEdge::none ? "-edge." + std::string(name(p.routing.edge)) : ""))),
      preset(choice<InProblem<&P::router_weight_on>>("router_weight_on", "routing.router_weight_on",
                                                     ID(75, p.router_weight_on == RouterWeightOn::input ? "+win" : ""))),
      derived("routing.tie_break", JSON("lower expert index")),
      preset(choice<InProblem<&P::activation>>("activation", "activation.kind", ID(70, "/" + std::string(name(p.activation))))),
      // An activation without a layout takes its own: interleaved for SwiGLU-OAI, gate_up for the others.
      preset(then(choice<InProblem<&P::layout>>(
                      "layout", "activation.layout",
                      ID(73, p.layout != natural_layout(p.activation) ? "-" + std::string(name(p.layout)) : "")),
                  [](const Reader&, const CaseNode& n, CaseSpec& c) {
                    if (n["activation"] && !n["layout"]) c.problem.layout = natural_layout(c.problem.activation);
                  })),
      mapping("swiglu", true),
      number<InProblem<&P::swiglu_alpha>>("swiglu.alpha", "activation.swiglu_alpha",
                                          ID(71, swiglu_shown(c, b) ? "-a" + id_number(p.swiglu_alpha) : "")),
      number<InProblem<&P::swiglu_limit>>("swiglu.limit", "activation.swiglu_limit",
                                          ID(72, swiglu_shown(c, b) ? "-l" + id_number(p.swiglu_limit) : "")),
      boolean<InProblem<&P::clamp_shared>>("clamp_shared", "activation.clamp_shared",
                                           ID(61, p.n_shared > 0 && !p.clamp_shared ? "-noclamp" : "")),
      preset(boolean<InProblem<&P::biases>>("biases", "activation.biases", ID(74, p.biases ? "+bias" : ""))),
  };
  add_quant<&P::quant>(t, "quant", ID(50, "/" + quant_short_name(p.quant)), nullptr);
  // Shared experts are quantized as the routed ones unless the case says otherwise.
  add_quant<&P::shared_quant>(t, "shared_quant", ID(60, p.n_shared > 0 ? "+sh." + quant_short_name(p.shared_quant) : ""),
                              [](const Reader&, const CaseNode& n, CaseSpec& c) {
                                if (n["quant"] && !n["shared_quant"]) c.problem.shared_quant = c.problem.quant;
                              });
  const std::vector<CaseField> rest = {
      dtype<InProblem<&P::input_dtype>>("input_dtype", "dtypes.input",
                                        ID(100, p.input_dtype != DType::bf16 ? "/in-" + std::string(dtype_name(p.input_dtype)) : "")),
      choice<InProblem<&P::intermediate>>(
          "intermediate", "dtypes.intermediate",
          ID(101, p.intermediate != IntermediateDtype::bf16 ? "/mid-" + std::string(name(p.intermediate)) : "")),
      dtype<InProblem<&P::output_dtype>>("output_dtype", "dtypes.output",
                                         ID(102, p.output_dtype != DType::bf16 ? "/out-" + std::string(dtype_name(p.output_dtype)) : "")),
      choice<InProblem<&P::stage>>("stage", "execution.stage",
                                   ID(91, p.stage != StageMode::auto_select ? "/" + std::string(name(p.stage)) : "")),
      choice<InProblem<&P::reduce>>("reduce", "execution.reduce", ID(90, "/" + std::string(name(p.reduce)))),
      integer<InProblem<&P::split_k>>("split_k", "execution.split_k", 1, 64, ID(92, p.split_k > 1 ? "/sk" + str(p.split_k) : "")),
      choice<InProblem<&P::shared_path>>("shared_path", "execution.shared_path",
                                         ID(62, p.n_shared > 0 && p.shared_path == SharedPath::separate ? "-sep" : "")),
      // case.json names every point: rounding.contract the whole contract's text, dtypes.* the three new points.
      custom("rounding_contract", "rounding.contract", true, &read_rounding_contract, JSON(contract_text(p)),
             ID(103, rounding_fragment(p))),
      derived("dtypes.gate_up", JSON(std::string(name(p.gate_up_dtype)))),
      derived("dtypes.slot", JSON(std::string(name(p.slot_dtype)))),
      derived("dtypes.reduce", JSON(std::string(name(p.reduce_dtype)))),
      boolean<At<&CaseSpec::pin_rounding>>("pin_rounding_contract", "rounding.pinned", ID(104, c.pin_rounding ? "/pinned" : "")),
      unsigned64<InProblem<&P::seed>>("seed", "seed", ID(140, p.seed != 0 ? "/s" + std::to_string(p.seed) : "")),
      // The generated data: the input distribution and the weight scale, where they are not the defaults.
      mapping("input", true),
      custom("input.distribution", "input_distribution.kind", true, &read_distribution,
             JSON(p.x_dist.kind == Distribution::normal ? "normal" : "uniform"),
             ID(110, input_shown(c, b) ? std::string(p.x_dist.kind == Distribution::normal ? "/x-n" : "/x-u") : "")),
      number<InProblem<&P::x_dist, &X::mean>>("input.mean", "input_distribution.mean",
                                              ID(111, input_shown(c, b) ? id_number(float(p.x_dist.mean)) : "")),
      number<InProblem<&P::x_dist, &X::scale>>("input.std", "input_distribution.std",
                                               ID(112, input_shown(c, b) ? "," + id_number(float(p.x_dist.scale)) : "")),
      number<InProblem<&P::x_dist, &X::outlier_fraction>>(
          "input.outlier_fraction", "input_distribution.outlier_fraction",
          ID(113, outliers_shown(c, b) ? "-o" + id_number(float(p.x_dist.outlier_fraction)) : "")),
      number<InProblem<&P::x_dist, &X::outlier_scale>>(
          "input.outlier_scale", "input_distribution.outlier_scale",
          ID(114, outliers_shown(c, b) ? "x" + id_number(float(p.x_dist.outlier_scale)) : "")),
      number<InProblem<&P::weight_std>>("weight_std", "", ID(120, p.weight_std != 0.0f ? "/wstd" + id_number(p.weight_std) : "")),
      mapping("targets", false),
      strings<At<&CaseSpec::targets, &Targets::archs>>("targets.arch", "targets.arch"),
      with_range(custom("targets.cu", "targets.cu", false, &read_cu, JSON(c.targets.compute_units)), 1, 1 << 20),
      strings<At<&CaseSpec::tags>>("tags", "tags"),
      strings<At<&CaseSpec::kernels>>("kernels", "kernels"),
      custom("timeout_s", "", false, &read_timeout, nullptr),
      // Tolerance overrides: their ranges are check_tolerance()'s; loosening one needs a reason (case_thresholds()).
      mapping("tolerance", false, {}, [](const Reader& r, const CaseNode& n, CaseSpec& c) {
        if (n["tolerance"])
          if (auto prob = check_tolerance(c.tolerance)) fail_at(r, n, *prob);
      }),
      number<At<&CaseSpec::tolerance, &T::min_cos>>("tolerance.min_cos", ""),
      number<At<&CaseSpec::tolerance, &T::max_rel>>("tolerance.max_rel", ""),
      number<At<&CaseSpec::tolerance, &T::atol>>("tolerance.atol", ""),
      number<At<&CaseSpec::tolerance, &T::rtol>>("tolerance.rtol", ""),
      number<At<&CaseSpec::tolerance, &T::max_mismatch_fraction>>("tolerance.max_mismatch_fraction", ""),
      text<At<&CaseSpec::tolerance, &T::reason>>("tolerance.reason"),
  };
  t.insert(t.end(), rest.begin(), rest.end());
  return t;
}
#undef ID
#undef JSON

}  // namespace

CaseField mapping(std::string key, bool problem, Id id, decltype(CaseField::after) after) {
  CaseField f = custom(std::move(key), "", problem,
                       [](const CaseField& f, const Reader& r, const CaseNode& v, CaseSpec&) { r.keys(v, case_sub_keys(f.key), f.key + "."); },
                       nullptr, id);
  f.mapping = true;
  f.after = after;
  return f;
}

}  // namespace fields

const std::vector<CaseField>& case_fields() {
  static const std::vector<CaseField> t = fields::table();
  return t;
}

namespace {
struct KeySets {
  std::set<std::string> top, preset;
  std::map<std::string, std::set<std::string>> sub;
};
const KeySets& key_sets() {
  static const KeySets k = [] {
    KeySets s;
    for (const CaseField& f : case_fields()) {
      if (f.key.empty()) continue;
      const std::size_t dot = f.key.find('.');
      const std::string top = f.key.substr(0, dot);
      s.top.insert(top);
      if (f.preset) s.preset.insert(top);
      if (dot != std::string::npos) s.sub[top].insert(f.key.substr(dot + 1));
    }
    return s;
  }();
  return k;
}
bool under(const std::string& key, const std::string& mapping) {
  return key.size() > mapping.size() && key.compare(0, mapping.size(), mapping) == 0 && key[mapping.size()] == '.';
}
}  // namespace

const std::set<std::string>& case_keys() { return key_sets().top; }
const std::set<std::string>& preset_keys() { return key_sets().preset; }
const std::set<std::string>& case_sub_keys(const std::string& mapping) {
  static const std::set<std::string> none;
  const auto it = key_sets().sub.find(mapping);
  return it == key_sets().sub.end() ? none : it->second;
}

void read_case_fields(const Reader& r, const CaseNode& n, CaseSpec& c) {
  const CaseField* open = nullptr;  // the mapping whose keys are being read, until its `after`
  for (const CaseField& f : case_fields()) {
    if (open && !under(f.key, open->key)) {
      open->after(r, n, c);
      open = nullptr;
    }
    if (f.key.empty()) continue;
    const std::size_t dot = f.key.find('.');
    const CaseNode v = dot == std::string::npos ? n[f.key] : n[f.key.substr(0, dot)][f.key.substr(dot + 1)];
    if (v && f.read) f.read(f, r, v, c);
    if (f.after && f.mapping) open = &f;
    else if (f.after) f.after(r, n, c);
  }
  if (open) open->after(r, n, c);
}

}  // namespace moe
