#include "harness/case_loader.hpp"

#include <yaml-cpp/depthguard.h>  // yaml-cpp >= 0.7: its parser refuses nesting past 2000 levels (DeepRecursion)
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "fixtures/error.hpp"
#include "fixtures/input_file.hpp"
#include "fixtures/exact_tier.hpp"
#include "fixtures/problem_sizes.hpp"
#include "fixtures/tensor.hpp"
#include "harness/case_yaml.hpp"
#include "harness/model_presets.hpp"
#include "harness/thresholds.hpp"

#ifndef MOE_CASES_DIR
#define MOE_CASES_DIR "cases"
#endif

namespace moe {
namespace {

const std::set<std::string> kCaseKeys = {
    "model", "variant", "hidden", "inter", "experts", "topk", "n_shared", "shared_inter", "tp", "ep", "ep_rank",
    "tokens", "routing", "activation", "layout", "swiglu", "clamp_shared", "shared_path", "biases", "router_weight_on", "quant",
    "shared_quant", "intermediate", "input_dtype", "output_dtype", "stage", "reduce", "split_k", "seed", "input",
    "weight_std", "targets", "tolerance", "tags", "kernels", "tier"};
const std::set<std::string> kQuantKeys = {"weight", "act", "flavor", "qmax", "scale_pow2", "mx_mode", "e8m0_edges", "amax_floor"};
// The keys of the case keys that are mappings (a sweep key may name one: `quant.weight`).
const std::map<std::string, std::set<std::string>> kNested = {
    {"routing", {"kind", "renormalize", "n_group", "topk_group", "routed_scaling"}},
    {"swiglu", {"alpha", "limit"}},
    {"quant", kQuantKeys},
    {"shared_quant", kQuantKeys},
    {"input", {"distribution", "mean", "std", "outlier_fraction", "outlier_scale"}},
    {"targets", {"arch", "cu"}},
    {"tolerance", {"min_cos", "max_rel", "atol", "rtol", "max_mismatch_fraction", "reason"}},
};
// Keys a model preset sets. A case that names a model takes them from the preset, not from the suite's defaults
// (precedence: the case's own keys > its model preset > defaults).
const std::set<std::string> kPresetKeys = {"hidden", "inter", "experts", "topk", "n_shared", "shared_inter", "routing",
                                           "activation", "layout", "biases", "quant", "shared_quant", "router_weight_on"};

template <class E>
E enumeration(const Reader& r, const CaseNode& n, const std::string& key) {
  const std::string s = r.string(n, key);
  auto v = parse_enum<E>(s);
  if (!v) r.fail(n.mark(), key, "unknown value '" + printable(s) + "'", "use one of: " + enum_names<E>());
  return *v;
}

// A problem found on the whole case, reported at the line of the key it names when the file sets that key.
[[noreturn]] void fail_at(const Reader& r, const CaseNode& n, const SpecProblem& p) {
  CaseNode v = n;
  for (std::size_t from = 0; v && from <= p.key.size();) {
    const std::size_t dot = std::min(p.key.find('.', from), p.key.size());
    v = v[p.key.substr(from, dot - from)];
    from = dot + 1;
  }
  r.fail(v ? v.mark() : YAML::Mark::null_mark(), p.key, p.problem, p.fix);
}

void read_quant(const Reader& r, const CaseNode& n, const std::string& key, QuantScheme& q) {
  r.keys(n, kQuantKeys, key + ".");
  if (n["weight"]) q.weight = enumeration<WeightFormat>(r, n["weight"], key + ".weight");
  if (n["act"]) q.act = enumeration<ActFormat>(r, n["act"], key + ".act");
  if (n["flavor"]) q.flavor = enumeration<Fp8Flavor>(r, n["flavor"], key + ".flavor");
  if (n["qmax"]) q.act_qmax = float(r.number(n["qmax"], key + ".qmax"));
  if (n["scale_pow2"]) q.act_scale_pow2 = r.boolean(n["scale_pow2"], key + ".scale_pow2");
  if (n["mx_mode"]) q.mx_mode = enumeration<MxScaleMode>(r, n["mx_mode"], key + ".mx_mode");
  if (n["e8m0_edges"]) q.e8m0_edges = enumeration<E8m0Edges>(r, n["e8m0_edges"], key + ".e8m0_edges");
  if (n["amax_floor"]) q.act_amax_floor = float(r.number(n["amax_floor"], key + ".amax_floor"));
}

DType read_dtype(const Reader& r, const CaseNode& n, const std::string& key) {
  const std::string s = r.string(n, key);
  auto d = parse_dtype(s);
  if (!d) r.fail(n.mark(), key, "unknown dtype '" + printable(s) + "'", "use bf16, f16 or f32");
  return *d;
}

std::string read_variant(const Reader& r, const CaseNode& n) {
  const std::string v = r.string(n, "variant", 64);
  if (v.empty() || v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") != std::string::npos)
    r.fail(n.mark(), "variant", "'" + printable(v) + "' is not an id suffix",
           "use 1 to 64 letters, digits and . _ + - (it is the last part of the case id)");
  return v;
}

void read_problem_maps(const Reader& r, const CaseNode& n, ProblemSpec& p) {
  if (const CaseNode ro = n["routing"]) {
    r.keys(ro, kNested.at("routing"), "routing.");
    if (ro["kind"]) p.routing.kind = enumeration<RoutingKind>(r, ro["kind"], "routing.kind");
    if (ro["renormalize"]) p.routing.renormalize = r.boolean(ro["renormalize"], "routing.renormalize");
    if (ro["n_group"]) p.routing.n_group = int(r.integer(ro["n_group"], "routing.n_group", 1, 1 << 16));
    if (ro["topk_group"]) p.routing.topk_group = int(r.integer(ro["topk_group"], "routing.topk_group", 1, 1 << 16));
    if (ro["routed_scaling"]) p.routing.routed_scaling = float(r.number(ro["routed_scaling"], "routing.routed_scaling"));
  }
  if (const CaseNode sw = n["swiglu"]) {
    r.keys(sw, kNested.at("swiglu"), "swiglu.");
    if (sw["alpha"]) p.swiglu_alpha = float(r.number(sw["alpha"], "swiglu.alpha"));
    if (sw["limit"]) p.swiglu_limit = float(r.number(sw["limit"], "swiglu.limit"));
  }
  if (n["quant"]) read_quant(r, n["quant"], "quant", p.quant);
  if (n["shared_quant"]) read_quant(r, n["shared_quant"], "shared_quant", p.shared_quant);
  else if (n["quant"]) p.shared_quant = p.quant;
  if (const CaseNode in = n["input"]) {
    r.keys(in, kNested.at("input"), "input.");
    if (in["distribution"]) {
      const std::string d = r.string(in["distribution"], "input.distribution");
      if (d != "normal" && d != "uniform") r.fail(in["distribution"].mark(), "input.distribution", "unknown distribution '" + printable(d) + "'", "use normal or uniform");
      p.x_dist.kind = d == "normal" ? Distribution::normal : Distribution::uniform;
    }
    if (in["mean"]) p.x_dist.mean = r.number(in["mean"], "input.mean");
    if (in["std"]) p.x_dist.scale = r.number(in["std"], "input.std");
    if (in["outlier_fraction"]) p.x_dist.outlier_fraction = r.number(in["outlier_fraction"], "input.outlier_fraction");
    if (in["outlier_scale"]) p.x_dist.outlier_scale = r.number(in["outlier_scale"], "input.outlier_scale");
  }
}

void read_case_maps(const Reader& r, const CaseNode& n, CaseSpec& c) {
  if (const CaseNode t = n["targets"]) {
    r.keys(t, kNested.at("targets"), "targets.");
    if (t["arch"]) c.targets.archs = r.strings(t["arch"], "targets.arch");
    if (t["cu"]) {
      const YAML::Node& cu = r.value(t["cu"], "targets.cu", "a list of CU counts");
      if (!cu.IsScalar() && !cu.IsSequence()) r.fail(cu.Mark(), "targets.cu", "expected a CU count or a list of them", "write [80, 304]");
      if (cu.IsScalar()) c.targets.compute_units.push_back(int(r.integer(cu, "targets.cu", 1, 1 << 20)));
      else for (const auto& e : cu) c.targets.compute_units.push_back(int(r.integer(e, "targets.cu", 1, 1 << 20)));
    }
  }
  if (const CaseNode t = n["tolerance"]) {
    r.keys(t, kNested.at("tolerance"), "tolerance.");
    auto num = [&](const char* k, std::optional<double>& v) { if (t[k]) v = r.number(t[k], std::string("tolerance.") + k); };
    num("min_cos", c.tolerance.min_cos);
    num("max_rel", c.tolerance.max_rel);
    num("atol", c.tolerance.atol);
    num("rtol", c.tolerance.rtol);
    num("max_mismatch_fraction", c.tolerance.max_mismatch_fraction);
    if (t["reason"]) c.tolerance.reason = r.string(t["reason"], "tolerance.reason", 4096, true);
    if (auto prob = check_tolerance(c.tolerance)) fail_at(r, n, *prob);
  }
}

CaseSpec read_case(const Reader& r, const CaseNode& n, const HostMemoryBudget& budget) {
  r.keys(n, kCaseKeys, "");
  CaseSpec c;
  ProblemSpec& p = c.problem;
  if (n["model"]) {
    c.model = r.string(n["model"], "model");
    if (!apply_model_preset(c.model, p))
      r.fail(n["model"].mark(), "model", "unknown model preset '" + printable(c.model) + "'", "use one of: " + model_preset_names() + ", or omit model and give the shape");
  }
  constexpr std::int64_t kBig = std::int64_t(1) << 40;
  if (n["variant"]) c.variant = read_variant(r, n["variant"]);
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
  if (n["activation"]) {
    p.activation = enumeration<Activation>(r, n["activation"], "activation");
    if (!n["layout"]) p.layout = p.activation == Activation::swiglu_oai ? GateUpLayout::interleaved : GateUpLayout::gate_up;
  }
  if (n["layout"]) p.layout = enumeration<GateUpLayout>(r, n["layout"], "layout");
  if (n["clamp_shared"]) p.clamp_shared = r.boolean(n["clamp_shared"], "clamp_shared");
  if (n["shared_path"]) p.shared_path = enumeration<SharedPath>(r, n["shared_path"], "shared_path");
  if (n["biases"]) p.biases = r.boolean(n["biases"], "biases");
  if (n["router_weight_on"]) p.router_weight_on = enumeration<RouterWeightOn>(r, n["router_weight_on"], "router_weight_on");
  if (n["intermediate"]) p.intermediate = enumeration<IntermediateDtype>(r, n["intermediate"], "intermediate");
  if (n["input_dtype"]) p.input_dtype = read_dtype(r, n["input_dtype"], "input_dtype");
  if (n["output_dtype"]) p.output_dtype = read_dtype(r, n["output_dtype"], "output_dtype");
  if (n["stage"]) p.stage = enumeration<StageMode>(r, n["stage"], "stage");
  if (n["reduce"]) p.reduce = enumeration<ReduceMode>(r, n["reduce"], "reduce");
  if (n["split_k"]) p.split_k = int(r.integer(n["split_k"], "split_k", 1, 64));
  if (n["seed"]) p.seed = r.unsigned64(n["seed"], "seed");
  if (n["weight_std"]) p.weight_std = float(r.number(n["weight_std"], "weight_std"));
  read_problem_maps(r, n, p);
  read_case_maps(r, n, c);
  if (n["tags"]) c.tags = r.strings(n["tags"], "tags");
  if (n["kernels"]) c.kernels = r.strings(n["kernels"], "kernels");
  if (n["tier"]) {
    const std::string t = r.string(n["tier"], "tier");
    if (t != "statistical" && t != "exact") r.fail(n["tier"].mark(), "tier", "unknown tier '" + printable(t) + "'", "use statistical or exact");
    c.tier = t == "exact" ? Tier::exact : Tier::statistical;
  }
  if (auto prob = validate(p)) fail_at(r, n, *prob);
  if (c.tier == Tier::exact)
    if (auto prob = validate_exact_tier(p)) fail_at(r, n, *prob);
  if (auto prob = check_host_memory(p, budget)) fail_at(r, n, *prob);
  c.source = r.where(YAML::Mark::null_mark());
  case_thresholds(c);  // loosening without a reason fails here
  c.id = canonical_id(c);
  return c;
}

// A sweep key: a case key, or `key.subkey` of one of the mappings (kNested).
std::vector<std::string> sweep_path(const Reader& r, const YAML::Node& key_node, const std::string& k) {
  const std::size_t dot = k.find('.');
  const std::string top = k.substr(0, dot);
  if (!kCaseKeys.count(top)) r.fail(key_node.Mark(), "sweep." + printable(k), "unknown case key '" + printable(top) + "'", "sweep over case keys only");
  if (dot == std::string::npos) return {top};
  const std::string sub = k.substr(dot + 1);
  const auto nested = kNested.find(top);
  if (nested == kNested.end() || !nested->second.count(sub)) {
    std::string list;
    if (nested != kNested.end())
      for (auto& s : nested->second) list += (list.empty() ? "" : ", ") + top + "." + s;
    r.fail(key_node.Mark(), "sweep." + printable(k), "unknown key '" + printable(sub) + "' under " + top,
           list.empty() ? top + " is not a mapping: sweep over `" + top + "` itself" : "use one of: " + list);
  }
  return {top, sub};
}

struct Expansion {
  const Reader& r;
  const YAML::Node& defaults;
  HostMemoryBudget budget;
  std::vector<CaseSpec>& out;
  std::map<std::string, std::string> seen;  // id -> where

  void add(CaseSpec c, const YAML::Node& entry) {
    c.source = r.where(entry);
    auto [it, fresh] = seen.emplace(c.id, c.source);
    if (!fresh)
      throw_bad_input(c.source, "variant", "duplicate case id '" + c.id + "' (also at " + it->second + ")",
                      "give one of them a distinct `variant:` or change a field the id shows");
    out.push_back(std::move(c));
  }

  void entry(const YAML::Node& e) {
    if (!e.IsMap()) r.fail(e.Mark(), "cases", "each case must be a mapping", "write `- key: value`");
    r.set_origin(e.Mark());
    const YAML::Node sweep = e["sweep"];
    const YAML::Node body = sweep.IsDefined() ? e["case"] : e;
    const bool names_model = (body.IsDefined() && body.IsMap() && body["model"].IsDefined()) ||
                             (sweep.IsDefined() && sweep.IsMap() && sweep["model"].IsDefined());
    std::vector<CaseNode::Layer> base = {{defaults, {}, YAML::Mark::null_mark(), names_model ? &kPresetKeys : nullptr}};
    if (!sweep.IsDefined()) {
      if (out.size() >= kMaxSuiteCases) too_many(e, "cases", 1);
      base.push_back({e});
      add(read_case(r, CaseNode(base), budget), e);
      return;
    }
    r.keys(e, {"sweep", "case"}, "");
    if (!sweep.IsMap() || sweep.size() == 0) r.fail(sweep.Mark(), "sweep", "must map field names to lists of values", "write `sweep: {tokens: [1, 2]}`");
    if (body.IsDefined() && !body.IsNull() && !body.IsMap()) r.fail(body.Mark(), "case", "must be a mapping", "write `case: {key: value}`");
    if (body.IsDefined()) base.push_back({body});
    std::vector<std::vector<std::string>> paths;
    std::vector<YAML::Mark> marks;
    std::vector<std::vector<YAML::Node>> axes;
    std::set<std::string> keys;
    std::size_t count = 1;
    for (auto it = sweep.begin(); it != sweep.end(); ++it) {
      const std::string k = r.key_text(it->first, "sweep.");
      if (!keys.insert(k).second) r.fail(it->first.Mark(), "sweep." + k, "written twice in one mapping", "keep one of them");
      paths.push_back(sweep_path(r, it->first, k));
      marks.push_back(it->first.Mark());
      if (!it->second.IsSequence() || it->second.size() == 0) r.fail(it->second.Mark(), "sweep." + k, "must be a non-empty list", "write [a, b]");
      axes.emplace_back(it->second.begin(), it->second.end());
      count = axes.back().size() > (kMaxSuiteCases + 1) / count ? kMaxSuiteCases + 1 : count * axes.back().size();
    }
    if (out.size() + count > kMaxSuiteCases) too_many(sweep, "sweep", count);
    std::vector<std::size_t> idx(axes.size(), 0);
    while (true) {
      std::vector<CaseNode::Layer> layers = base;
      for (std::size_t a = 0; a < axes.size(); ++a) layers.push_back({axes[a][idx[a]], paths[a], marks[a]});
      add(read_case(r, CaseNode(std::move(layers)), budget), e);
      std::size_t a = 0;
      for (; a < axes.size(); ++a) {
        if (++idx[a] < axes[a].size()) break;
        idx[a] = 0;
      }
      if (a == axes.size()) break;
    }
  }

  // `adding`: the cases this entry expands to (saturated above the limit).
  [[noreturn]] void too_many(const YAML::Node& at, const char* key, std::size_t adding) const {
    const std::string n = adding > kMaxSuiteCases ? "more than " + std::to_string(kMaxSuiteCases) : std::to_string(adding);
    r.fail(at.Mark(), key,
           "this entry expands to " + n + " cases, " + std::to_string(out.size()) + " came before it: past the limit of " +
               std::to_string(kMaxSuiteCases) + " cases per suite",
           "split the sweep or the suite into smaller suite files");
  }
};

Suite parse_root(const Reader& r, const YAML::Node& root, const std::string& text) {
  const std::string& file = r.file();
  if (!root.IsMap()) throw_bad_input(file, "", "a suite file must be a mapping with suite: and cases:", "see README.md \"Case files\"");
  r.keys(root, {"suite", "description", "defaults", "cases"}, "");
  Suite s;
  s.file = file;
  s.file_hash = hash_bytes(text.data(), text.size());
  if (!root["suite"]) r.fail(root.Mark(), "suite", "missing", "add `suite: <name>`");
  s.name = r.string(root["suite"], "suite", 256);
  if (root["description"]) s.description = r.string(root["description"], "description", 65536, true);
  const YAML::Node defaults = root["defaults"] ? root["defaults"] : YAML::Node(YAML::NodeType::Map);
  if (!defaults.IsMap()) r.fail(defaults.Mark(), "defaults", "must be a mapping", "write `defaults: {key: value}`");
  r.keys(defaults, kCaseKeys, "defaults.");
  const YAML::Node cases = root["cases"];
  if (!cases || !cases.IsSequence()) r.fail(root.Mark(), "cases", "missing or not a list", "add `cases:` with `- ...` entries");
  if (cases.size() > kMaxSuiteCases)
    r.fail(cases.Mark(), "cases", "the suite lists " + std::to_string(cases.size()) + " cases, past the limit of " +
                                      std::to_string(kMaxSuiteCases) + " per suite", "split it into smaller suite files");
  Expansion x{r, defaults, host_memory_budget(), s.cases, {}};
  for (const auto& e : cases) x.entry(e);
  return s;
}

Suite parse(const std::string& text, const std::string& file) {
  if (text.size() > kSuiteFileLimit.bytes)
    throw_bad_input(file, "", "the suite file holds " + std::to_string(text.size()) + " bytes, past the limit of " +
                                  kSuiteFileLimit.text,
                    "split it into smaller suite files");
  const Reader r(file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    throw_bad_input(r.where(e.mark), "", "the YAML nests deeper than 2000 levels (the parser's limit)",
                    "a suite needs a few levels of nesting: flatten it");
  } catch (const YAML::ParserException& e) {
    throw_bad_input(r.where(e.mark), "", "YAML syntax error: " + e.msg, "fix the YAML syntax");
  } catch (const YAML::Exception& e) {
    throw_bad_input(r.where(e.mark), "", "unreadable YAML: " + e.msg, "fix the YAML syntax");
  }
  try {
    return parse_root(r, root, text);
  } catch (const YAML::Exception& e) {  // a node the reads above did not expect: still bad input, never internal
    throw_bad_input(r.where(e.mark), "", "malformed YAML node: " + e.msg, "see README.md \"Case files\" for the schema");
  }
}

}  // namespace

Suite load_suite_text(const std::string& text, const std::string& file_label) { return parse(text, file_label); }

Suite load_suite_file(const std::filesystem::path& file) {
  return parse(read_input_file(file, "suite", kSuiteFileLimit), file.string());
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
