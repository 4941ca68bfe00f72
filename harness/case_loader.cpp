#include "harness/case_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "fixtures/error.hpp"
#include "fixtures/exact_tier.hpp"
#include "fixtures/tensor.hpp"
#include "harness/model_presets.hpp"
#include "harness/thresholds.hpp"

#ifndef MOE_CASES_DIR
#define MOE_CASES_DIR "cases"
#endif

namespace moe {
namespace {

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  // Merged nodes (defaults + case + sweep) are built in memory and carry no mark: they report the line of the case
  // entry being read.
  std::string where(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark().is_null() ? origin_ : n.Mark();
    return m.is_null() ? file_ : file_ + ":" + std::to_string(m.line + 1);
  }
  void set_origin(const YAML::Node& n) const { origin_ = n.Mark(); }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& key, const std::string& problem,
                         const std::string& fix) const {
    throw_bad_input(where(n), key, problem, fix);
  }
  void keys(const YAML::Node& map, const std::set<std::string>& known, const std::string& prefix) const {
    if (!map.IsMap()) fail(map, prefix, "must be a mapping", "write it as `key: value` lines");
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string k = it->first.as<std::string>();
      if (!known.count(k)) {
        std::string list;
        for (auto& s : known) list += (list.empty() ? "" : ", ") + s;
        fail(it->first, prefix + k, "unknown key", "use one of: " + list);
      }
    }
  }
  std::int64_t integer(const YAML::Node& n, const std::string& key, std::int64_t lo, std::int64_t hi) const {
    std::int64_t v;
    try {
      if (!n.IsScalar()) throw YAML::BadConversion(n.Mark());
      v = n.as<std::int64_t>();
    } catch (const YAML::Exception&) {
      fail(n, key, "expected an integer", "write a whole number");
    }
    if (v < lo || v > hi)
      fail(n, key, "value " + std::to_string(v) + " outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]",
           "choose a value in range");
    return v;
  }
  double number(const YAML::Node& n, const std::string& key) const {
    try {
      if (!n.IsScalar()) throw YAML::BadConversion(n.Mark());
      return n.as<double>();
    } catch (const YAML::Exception&) {
      fail(n, key, "expected a number", "write a number such as 0.999");
    }
  }
  bool boolean(const YAML::Node& n, const std::string& key) const {
    try {
      if (!n.IsScalar()) throw YAML::BadConversion(n.Mark());
      return n.as<bool>();
    } catch (const YAML::Exception&) {
      fail(n, key, "expected true or false", "write true or false");
    }
  }
  std::string string(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a string", "write a plain value");
    return n.as<std::string>();
  }
  template <class E>
  E enumeration(const YAML::Node& n, const std::string& key) const {
    const std::string s = string(n, key);
    auto v = parse_enum<E>(s);
    if (!v) fail(n, key, "unknown value '" + s + "'", "use one of: " + enum_names<E>());
    return *v;
  }
  std::vector<std::string> strings(const YAML::Node& n, const std::string& key) const {
    std::vector<std::string> out;
    if (n.IsScalar()) return {string(n, key)};
    if (!n.IsSequence()) fail(n, key, "expected a list", "write [a, b]");
    for (const auto& e : n) out.push_back(string(e, key));
    return out;
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  mutable YAML::Mark origin_ = YAML::Mark::null_mark();
};

// Deep merge: `over` wins; nested mappings merge key by key. Child nodes keep their source marks (line numbers).
YAML::Node merge(const YAML::Node& base, const YAML::Node& over) {
  if (!base || base.IsNull()) return over;
  if (!over || over.IsNull()) return base;
  if (!base.IsMap() || !over.IsMap()) return over;
  YAML::Node out(YAML::NodeType::Map);
  for (auto it = base.begin(); it != base.end(); ++it) out[it->first.as<std::string>()] = it->second;
  for (auto it = over.begin(); it != over.end(); ++it) {
    const std::string k = it->first.as<std::string>();
    out[k] = out[k] ? merge(out[k], it->second) : it->second;
  }
  return out;
}

const std::set<std::string> kCaseKeys = {
    "model", "variant", "hidden", "inter", "experts", "topk", "n_shared", "shared_inter", "tp", "ep", "ep_rank",
    "tokens", "routing", "activation", "layout", "swiglu", "clamp_shared", "shared_path", "biases", "router_weight_on", "quant",
    "shared_quant", "intermediate", "input_dtype", "output_dtype", "stage", "reduce", "split_k", "seed", "input",
    "weight_std", "targets", "tolerance", "tags", "kernels", "tier", "timeout_s"};

void read_quant(const Reader& r, const YAML::Node& n, const std::string& key, QuantScheme& q) {
  r.keys(n, {"weight", "act", "flavor", "qmax", "scale_pow2", "mx_mode", "e8m0_edges", "amax_floor"}, key + ".");
  if (n["weight"]) q.weight = r.enumeration<WeightFormat>(n["weight"], key + ".weight");
  if (n["act"]) q.act = r.enumeration<ActFormat>(n["act"], key + ".act");
  if (n["flavor"]) q.flavor = r.enumeration<Fp8Flavor>(n["flavor"], key + ".flavor");
  if (n["qmax"]) q.act_qmax = float(r.number(n["qmax"], key + ".qmax"));
  if (n["scale_pow2"]) q.act_scale_pow2 = r.boolean(n["scale_pow2"], key + ".scale_pow2");
  if (n["mx_mode"]) q.mx_mode = r.enumeration<MxScaleMode>(n["mx_mode"], key + ".mx_mode");
  if (n["e8m0_edges"]) q.e8m0_edges = r.enumeration<E8m0Edges>(n["e8m0_edges"], key + ".e8m0_edges");
  if (n["amax_floor"]) q.act_amax_floor = float(r.number(n["amax_floor"], key + ".amax_floor"));
}

DType read_dtype(const Reader& r, const YAML::Node& n, const std::string& key) {
  const std::string s = r.string(n, key);
  auto d = parse_dtype(s);
  if (!d) r.fail(n, key, "unknown dtype '" + s + "'", "use bf16, f16 or f32");
  return *d;
}

CaseSpec read_case(const Reader& r, const YAML::Node& n) {
  r.keys(n, kCaseKeys, "");
  CaseSpec c;
  c.source = r.where(n);
  ProblemSpec& p = c.problem;
  if (n["model"]) {
    c.model = r.string(n["model"], "model");
    if (!apply_model_preset(c.model, p))
      r.fail(n["model"], "model", "unknown model preset '" + c.model + "'", "use one of: " + model_preset_names() + ", or omit model and give the shape");
  }
  constexpr std::int64_t kBig = std::int64_t(1) << 40;
  if (n["variant"]) c.variant = r.string(n["variant"], "variant");
  if (n["hidden"]) p.hidden = r.integer(n["hidden"], "hidden", 1, kBig);
  if (n["inter"]) p.inter = r.integer(n["inter"], "inter", 1, kBig);
  if (n["experts"]) p.experts = r.integer(n["experts"], "experts", 1, 1 << 20);
  if (n["topk"]) p.topk = int(r.integer(n["topk"], "topk", 1, 1 << 20));
  if (n["n_shared"]) p.n_shared = int(r.integer(n["n_shared"], "n_shared", 0, 64));
  if (n["shared_inter"]) p.shared_inter = r.integer(n["shared_inter"], "shared_inter", 0, kBig);
  if (n["tp"]) p.tp = int(r.integer(n["tp"], "tp", 1, 1024));
  if (n["ep"]) p.ep = int(r.integer(n["ep"], "ep", 1, 1024));
  if (n["ep_rank"]) p.ep_rank = int(r.integer(n["ep_rank"], "ep_rank", 0, 1023));
  if (n["tokens"]) p.tokens = r.integer(n["tokens"], "tokens", 1, 1 << 24);
  if (const auto& ro = n["routing"]) {
    r.keys(ro, {"kind", "renormalize", "n_group", "topk_group", "routed_scaling"}, "routing.");
    if (ro["kind"]) p.routing.kind = r.enumeration<RoutingKind>(ro["kind"], "routing.kind");
    if (ro["renormalize"]) p.routing.renormalize = r.boolean(ro["renormalize"], "routing.renormalize");
    if (ro["n_group"]) p.routing.n_group = int(r.integer(ro["n_group"], "routing.n_group", 1, 1 << 16));
    if (ro["topk_group"]) p.routing.topk_group = int(r.integer(ro["topk_group"], "routing.topk_group", 1, 1 << 16));
    if (ro["routed_scaling"]) p.routing.routed_scaling = float(r.number(ro["routed_scaling"], "routing.routed_scaling"));
  }
  if (n["activation"]) {
    p.activation = r.enumeration<Activation>(n["activation"], "activation");
    if (!n["layout"]) p.layout = p.activation == Activation::swiglu_oai ? GateUpLayout::interleaved : GateUpLayout::gate_up;
  }
  if (n["layout"]) p.layout = r.enumeration<GateUpLayout>(n["layout"], "layout");
  if (const auto& sw = n["swiglu"]) {
    r.keys(sw, {"alpha", "limit"}, "swiglu.");
    if (sw["alpha"]) p.swiglu_alpha = float(r.number(sw["alpha"], "swiglu.alpha"));
    if (sw["limit"]) p.swiglu_limit = float(r.number(sw["limit"], "swiglu.limit"));
  }
  if (n["clamp_shared"]) p.clamp_shared = r.boolean(n["clamp_shared"], "clamp_shared");
  if (n["shared_path"]) p.shared_path = r.enumeration<SharedPath>(n["shared_path"], "shared_path");
  if (n["biases"]) p.biases = r.boolean(n["biases"], "biases");
  if (n["router_weight_on"]) p.router_weight_on = r.enumeration<RouterWeightOn>(n["router_weight_on"], "router_weight_on");
  if (n["quant"]) read_quant(r, n["quant"], "quant", p.quant);
  if (n["shared_quant"]) read_quant(r, n["shared_quant"], "shared_quant", p.shared_quant);
  else if (n["quant"]) p.shared_quant = p.quant;
  if (n["intermediate"]) p.intermediate = r.enumeration<IntermediateDtype>(n["intermediate"], "intermediate");
  if (n["input_dtype"]) p.input_dtype = read_dtype(r, n["input_dtype"], "input_dtype");
  if (n["output_dtype"]) p.output_dtype = read_dtype(r, n["output_dtype"], "output_dtype");
  if (n["stage"]) p.stage = r.enumeration<StageMode>(n["stage"], "stage");
  if (n["reduce"]) p.reduce = r.enumeration<ReduceMode>(n["reduce"], "reduce");
  if (n["split_k"]) p.split_k = int(r.integer(n["split_k"], "split_k", 1, 64));
  if (n["seed"]) p.seed = std::uint64_t(r.integer(n["seed"], "seed", 0, std::int64_t(1) << 62));
  if (const auto& in = n["input"]) {
    r.keys(in, {"distribution", "mean", "std", "outlier_fraction", "outlier_scale"}, "input.");
    if (in["distribution"]) {
      const std::string d = r.string(in["distribution"], "input.distribution");
      if (d != "normal" && d != "uniform") r.fail(in["distribution"], "input.distribution", "unknown distribution '" + d + "'", "use normal or uniform");
      p.x_dist.kind = d == "normal" ? Distribution::normal : Distribution::uniform;
    }
    if (in["mean"]) p.x_dist.mean = r.number(in["mean"], "input.mean");
    if (in["std"]) p.x_dist.scale = r.number(in["std"], "input.std");
    if (in["outlier_fraction"]) p.x_dist.outlier_fraction = r.number(in["outlier_fraction"], "input.outlier_fraction");
    if (in["outlier_scale"]) p.x_dist.outlier_scale = r.number(in["outlier_scale"], "input.outlier_scale");
  }
  if (n["weight_std"]) p.weight_std = float(r.number(n["weight_std"], "weight_std"));
  if (const auto& t = n["targets"]) {
    r.keys(t, {"arch", "cu"}, "targets.");
    if (t["arch"]) c.targets.archs = r.strings(t["arch"], "targets.arch");
    if (t["cu"]) {
      const auto& cu = t["cu"];
      if (cu.IsScalar()) c.targets.compute_units.push_back(int(r.integer(cu, "targets.cu", 1, 1 << 20)));
      else for (const auto& e : cu) c.targets.compute_units.push_back(int(r.integer(e, "targets.cu", 1, 1 << 20)));
    }
  }
  if (const auto& t = n["tolerance"]) {
    r.keys(t, {"min_cos", "max_rel", "atol", "rtol", "max_mismatch_fraction", "reason"}, "tolerance.");
    if (t["min_cos"]) c.tolerance.min_cos = r.number(t["min_cos"], "tolerance.min_cos");
    if (t["max_rel"]) c.tolerance.max_rel = r.number(t["max_rel"], "tolerance.max_rel");
    if (t["atol"]) c.tolerance.atol = r.number(t["atol"], "tolerance.atol");
    if (t["rtol"]) c.tolerance.rtol = r.number(t["rtol"], "tolerance.rtol");
    if (t["max_mismatch_fraction"]) c.tolerance.max_mismatch_fraction = r.number(t["max_mismatch_fraction"], "tolerance.max_mismatch_fraction");
    if (t["reason"]) c.tolerance.reason = r.string(t["reason"], "tolerance.reason");
  }
  if (n["tags"]) c.tags = r.strings(n["tags"], "tags");
  if (n["kernels"]) c.kernels = r.strings(n["kernels"], "kernels");
  if (n["timeout_s"] && !((c.timeout_s = r.number(n["timeout_s"], "timeout_s")) > 0))
    r.fail(n["timeout_s"], "timeout_s", "must be a positive number of seconds", "give the case's time limit, e.g. 600");
  if (n["tier"]) {
    const std::string t = r.string(n["tier"], "tier");
    if (t != "statistical" && t != "exact") r.fail(n["tier"], "tier", "unknown tier '" + t + "'", "use statistical or exact");
    c.tier = t == "exact" ? Tier::exact : Tier::statistical;
  }
  if (auto prob = validate(p)) r.fail(n, prob->key, prob->problem, prob->fix);
  if (c.tier == Tier::exact)
    if (auto prob = validate_exact_tier(p)) r.fail(n, prob->key, prob->problem, prob->fix);
  case_thresholds(c);  // loosening without a reason fails here
  c.id = canonical_id(c);
  return c;
}

// "quant.weight" -> {quant: {weight: v}}
YAML::Node dotted(const std::string& path, const YAML::Node& v) {
  const auto dot = path.find('.');
  YAML::Node m(YAML::NodeType::Map);
  if (dot == std::string::npos) m[path] = v;
  else m[path.substr(0, dot)] = dotted(path.substr(dot + 1), v);
  return m;
}

// Keys a model preset sets. A case that names a model takes them from the preset, not from the suite's defaults
// (precedence: the case's own keys > its model preset > defaults).
const std::set<std::string> kPresetKeys = {"hidden", "inter", "experts", "topk", "n_shared", "shared_inter", "routing",
                                           "activation", "layout", "biases", "quant", "shared_quant", "router_weight_on"};

YAML::Node defaults_for(const YAML::Node& defaults, const YAML::Node& entry) {
  const YAML::Node body = entry["sweep"] ? (entry["case"] ? entry["case"] : YAML::Node()) : entry;
  const bool names_model = (body && body.IsMap() && body["model"]) ||
                           (entry["sweep"] && entry["sweep"].IsMap() && entry["sweep"]["model"]);
  if (!names_model || !defaults.IsMap()) return defaults;
  YAML::Node d(YAML::NodeType::Map);
  for (auto it = defaults.begin(); it != defaults.end(); ++it)
    if (!kPresetKeys.count(it->first.as<std::string>())) d[it->first.as<std::string>()] = it->second;
  return d;
}

void expand(const Reader& r, const YAML::Node& all_defaults, const YAML::Node& entry, std::vector<CaseSpec>& out) {
  if (!entry.IsMap()) r.fail(entry, "cases", "each case must be a mapping", "write `- key: value`");
  const YAML::Node defaults = defaults_for(all_defaults, entry);
  r.set_origin(entry);
  if (!entry["sweep"]) {
    CaseSpec c = read_case(r, merge(defaults, entry));
    c.source = r.where(entry);
    out.push_back(std::move(c));
    return;
  }
  r.keys(entry, {"sweep", "case"}, "");
  const YAML::Node& sweep = entry["sweep"];
  if (!sweep.IsMap() || sweep.size() == 0) r.fail(sweep, "sweep", "must map field names to lists of values", "write `sweep: {tokens: [1, 2]}`");
  std::vector<std::pair<std::string, std::vector<YAML::Node>>> axes;
  for (auto it = sweep.begin(); it != sweep.end(); ++it) {
    const std::string k = it->first.as<std::string>();
    const std::string top = k.substr(0, k.find('.'));
    if (!kCaseKeys.count(top)) r.fail(it->first, "sweep." + k, "unknown case key '" + top + "'", "sweep over case keys only");
    if (!it->second.IsSequence() || it->second.size() == 0) r.fail(it->second, "sweep." + k, "must be a non-empty list", "write [a, b]");
    std::vector<YAML::Node> vals;
    for (const auto& v : it->second) vals.push_back(v);
    axes.push_back({k, vals});
  }
  const YAML::Node base = merge(defaults, entry["case"] ? entry["case"] : YAML::Node(YAML::NodeType::Map));
  std::vector<std::size_t> idx(axes.size(), 0);
  while (true) {
    YAML::Node over(YAML::NodeType::Map);
    for (std::size_t a = 0; a < axes.size(); ++a) over = merge(over, dotted(axes[a].first, axes[a].second[idx[a]]));
    YAML::Node merged = merge(base, over);
    CaseSpec c = read_case(r, merged);
    c.source = r.where(entry);
    out.push_back(std::move(c));
    std::size_t a = 0;
    for (; a < axes.size(); ++a) {
      if (++idx[a] < axes[a].second.size()) break;
      idx[a] = 0;
    }
    if (a == axes.size()) break;
  }
}

Suite parse(const std::string& text, const std::string& file) {
  Reader r(file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw_bad_input(file + ":" + std::to_string(e.mark.line + 1), "", "YAML syntax error: " + e.msg, "fix the YAML syntax");
  }
  if (!root.IsMap()) throw_bad_input(file, "", "a suite file must be a mapping with suite: and cases:", "see README.md \"Case files\"");
  r.keys(root, {"suite", "description", "defaults", "cases"}, "");
  Suite s;
  s.file = file;
  s.file_hash = hash_bytes(text.data(), text.size());
  if (!root["suite"]) r.fail(root, "suite", "missing", "add `suite: <name>`");
  s.name = r.string(root["suite"], "suite");
  if (root["description"]) s.description = r.string(root["description"], "description");
  const YAML::Node defaults = root["defaults"] ? root["defaults"] : YAML::Node(YAML::NodeType::Map);
  if (!defaults.IsMap()) r.fail(defaults, "defaults", "must be a mapping", "write `defaults: {key: value}`");
  const YAML::Node& cases = root["cases"];
  if (!cases || !cases.IsSequence()) r.fail(root, "cases", "missing or not a list", "add `cases:` with `- ...` entries");
  for (const auto& e : cases) expand(r, defaults, e, s.cases);
  std::map<std::string, std::string> seen;
  for (const CaseSpec& c : s.cases) {
    auto [it, fresh] = seen.emplace(c.id, c.source);
    if (!fresh)
      throw_bad_input(c.source, "variant", "duplicate case id '" + c.id + "' (also at " + it->second + ")",
                      "give one of them a distinct `variant:` or change a field the id shows");
  }
  return s;
}

}  // namespace

Suite load_suite_text(const std::string& text, const std::string& file_label) { return parse(text, file_label); }

Suite load_suite_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw_bad_input(file.string(), "", "cannot open the suite file", "check the path, or name a suite in cases/");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), file.string());
}

const CaseSpec& find_case(const Suite& s, const std::string& id) {
  for (const auto& c : s.cases)
    if (c.id == id) return c;
  throw_bad_input(s.file, "CASE", "no case with id '" + id + "'", "list ids with `moe-harness list --suite " + s.file + "`");
}

std::filesystem::path resolve_suite(const std::string& s) {
  if (s.find('/') != std::string::npos || (s.size() > 5 && s.substr(s.size() - 5) == ".yaml")) return s;
  // $MOE_CASES_DIR, else the suites installed beside this executable (cmake --install puts them in
  // <prefix>/share/moe-harness/cases), else the source tree this binary was built from.
  if (const char* env = std::getenv("MOE_CASES_DIR")) return std::filesystem::path(env) / (s + ".yaml");
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path().parent_path() / "share" / "moe-harness" / "cases";
    if (std::filesystem::is_directory(installed, ec)) return installed / (s + ".yaml");
  }
  return std::filesystem::path(MOE_CASES_DIR) / (s + ".yaml");
}

}  // namespace moe
