#include "harness/case/case_loader.hpp"

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
#include "harness/case/case_fields.hpp"
#include "harness/case/case_yaml.hpp"
#include "harness/case/case_thresholds.hpp"
#include "harness/case/sequence_order.hpp"

#ifndef MOE_CASES_DIR
#define MOE_CASES_DIR "cases"
#endif

namespace moe {
namespace {

CaseSpec read_case(const Reader& r, const CaseNode& n, const HostMemoryBudget& budget) {
  r.keys(n, case_keys(), "");
  CaseSpec c;
  read_case_fields(r, n, c);
  const ProblemSpec& p = c.problem;
  if (auto prob = validate(p)) fail_at(r, n, *prob);
  if (c.tier == Tier::exact)
    if (auto prob = validate_exact_tier(p)) fail_at(r, n, *prob);
  if (auto prob = check_host_memory(p, budget)) fail_at(r, n, *prob);
  c.source = r.where(YAML::Mark::null_mark());
  case_thresholds(c);  // loosening without a reason fails here
  c.id = canonical_id(c);
  return c;
}

// A sweep key: a case key, or `key.subkey` of one of the mappings.
std::vector<std::string> sweep_path(const Reader& r, const YAML::Node& key_node, const std::string& k) {
  const std::size_t dot = k.find('.');
  const std::string top = k.substr(0, dot);
  if (!case_keys().count(top)) r.fail(key_node.Mark(), "sweep." + printable(k), "unknown case key '" + printable(top) + "'", "sweep over case keys only");
  if (dot == std::string::npos) return {top};
  const std::string sub = k.substr(dot + 1);
  const std::set<std::string>& nested = case_sub_keys(top);
  if (!nested.count(sub)) {
    std::string list;
    for (auto& s : nested) list += (list.empty() ? "" : ", ") + top + "." + s;
    r.fail(key_node.Mark(), "sweep." + printable(k), "unknown key '" + printable(sub) + "' under " + top,
           list.empty() ? top + " is not a mapping: sweep over `" + top + "` itself" : "use one of: " + list);
  }
  return {top, sub};
}

std::string join_path(const std::vector<std::string>& path) {
  std::string s;
  for (const auto& p : path) s += (s.empty() ? "" : ".") + p;
  return s;
}

struct Expansion {
  const Reader& r;
  const YAML::Node& defaults;
  HostMemoryBudget budget;
  std::vector<CaseSpec>& out;
  std::map<std::string, std::string> seen;  // id -> where
  bool sequence = false;  // a call sequence: one case may be several steps (their ids get the step's position)

  void add(CaseSpec c, const YAML::Node& entry) {
    c.source = r.where(entry);
    auto [it, fresh] = seen.emplace(c.id, c.source);
    if (sequence) fresh = true;
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
    std::vector<CaseNode::Layer> base = {{defaults, {}, YAML::Mark::null_mark(), names_model ? &preset_keys() : nullptr, {}}};
    if (!sweep.IsDefined()) {
      if (out.size() >= kMaxSuiteCases) too_many(e, "cases", 1);
      base.push_back({e, {}, YAML::Mark::null_mark(), nullptr, {}});
      add(read_case(r, CaseNode(base), budget), e);
      return;
    }
    r.keys(e, {"sweep", "case"}, "");
    if (!sweep.IsMap() || sweep.size() == 0) r.fail(sweep.Mark(), "sweep", "must map field names to lists of values", "write `sweep: {tokens: [1, 2]}`");
    if (body.IsDefined() && !body.IsNull() && !body.IsMap()) r.fail(body.Mark(), "case", "must be a mapping", "write `case: {key: value}`");
    if (body.IsDefined()) base.push_back({body, {}, YAML::Mark::null_mark(), nullptr, {}});
    std::vector<std::vector<std::string>> paths;
    std::vector<YAML::Mark> marks;
    std::vector<std::vector<YAML::Node>> axes;
    std::set<std::string> keys;
    std::size_t count = 1;
    for (auto it = sweep.begin(); it != sweep.end(); ++it) {
      const std::string k = r.key_text(it->first, "sweep.");
      if (!keys.insert(k).second) r.fail(it->first.Mark(), "sweep." + k, "written twice in one mapping", "keep one of them");
      paths.push_back(sweep_path(r, it->first, k));
      // `quant` and `quant.weight` both sweep quant.weight: one axis would silently override the other.
      for (std::size_t a = 0; a + 1 < paths.size(); ++a) {
        const auto& x = paths[a].size() <= paths.back().size() ? paths[a] : paths.back();
        const auto& y = paths[a].size() <= paths.back().size() ? paths.back() : paths[a];
        if (std::equal(x.begin(), x.end(), y.begin()))
          r.fail(it->first.Mark(), "sweep." + k,
                 "overlaps sweep." + join_path(paths[a]) + " (both set " + join_path(y) + "; one would silently win)",
                 "sweep the key under one spelling only");
      }
      marks.push_back(it->first.Mark());
      if (!it->second.IsSequence() || it->second.size() == 0) r.fail(it->second.Mark(), "sweep." + k, "must be a non-empty list", "write [a, b]");
      axes.emplace_back(it->second.begin(), it->second.end());
      count = axes.back().size() > (kMaxSuiteCases + 1) / count ? kMaxSuiteCases + 1 : count * axes.back().size();
    }
    if (out.size() + count > kMaxSuiteCases) too_many(sweep, "sweep", count);
    std::vector<std::size_t> idx(axes.size(), 0);
    while (true) {
      std::vector<CaseNode::Layer> layers = base;
      for (std::size_t a = 0; a < axes.size(); ++a) layers.push_back({axes[a][idx[a]], paths[a], marks[a], nullptr, {}});
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

// `sequence: {order: scripted | shuffled, seed: N}`; `seed_override` (`run --sequence-seed`) beats the file's seed.
void read_sequence(const Reader& r, const YAML::Node& n, Suite& s, std::optional<std::uint64_t> seed_override) {
  if (!n.IsMap()) r.fail(n.Mark(), "sequence", "must be a mapping", "write `sequence: {order: scripted}` or `sequence: {order: shuffled, seed: 7}`");
  r.keys(n, {"order", "seed"}, "sequence.");
  if (!n["order"]) r.fail(n.Mark(), "sequence.order", "missing", "add `order: scripted` (file order) or `order: shuffled`");
  s.sequence_order = r.string(n["order"], "sequence.order", 64);
  if (s.sequence_order != "scripted" && s.sequence_order != "shuffled")
    r.fail(n["order"].Mark(), "sequence.order", "unknown order '" + printable(s.sequence_order) + "'",
           "use scripted (file order) or shuffled (a permutation drawn from `seed`)");
  if (n["seed"]) s.sequence_seed = r.unsigned64(n["seed"], "sequence.seed");
  else if (s.sequence_order == "shuffled")
    r.fail(n.Mark(), "sequence.seed", "missing for a shuffled sequence", "add `seed: N` (a whole number in [0, 2^64 - 1])");
  if (seed_override) s.sequence_seed = *seed_override;
  s.sequence = true;
}

// A call sequence's cases become its steps: put in run order, each id prefixed with its position ("s03/<id>").
void order_steps(const Reader& r, const YAML::Node& cases, Suite& s) {
  if (s.cases.empty())
    r.fail(cases.Mark(), "cases", "a call sequence with zero steps", "list at least one case under `cases:` (each is a step)");
  const std::vector<std::size_t> order = sequence_order(s.cases.size(), s.sequence_order, s.sequence_seed);
  const int width = std::max<int>(2, int(std::to_string(s.cases.size() - 1).size()));
  std::vector<CaseSpec> steps;
  for (std::size_t k = 0; k < order.size(); ++k) {
    CaseSpec c = s.cases[order[k]];
    std::string index = std::to_string(k);
    c.id = "s" + std::string(std::size_t(width) - std::min(index.size(), std::size_t(width)), '0') + index + "/" + c.id;
    c.step = CaseSpec::SequenceStep{k, order.size(), s.sequence_order, s.sequence_seed};
    steps.push_back(std::move(c));
  }
  s.cases = std::move(steps);
}

Suite parse_root(const Reader& r, const YAML::Node& root, const std::string& text,
                 std::optional<std::uint64_t> sequence_seed) {
  const std::string& file = r.file();
  if (!root.IsMap()) throw_bad_input(file, "", "a suite file must be a mapping with suite: and cases:", "see docs/cases.md");
  r.keys(root, {"suite", "description", "defaults", "cases", "sequence"}, "");
  Suite s;
  s.file = file;
  s.file_hash = hash_bytes(text.data(), text.size());
  if (!root["suite"]) r.fail(root.Mark(), "suite", "missing", "add `suite: <name>`");
  s.name = r.string(root["suite"], "suite", 256);
  if (root["description"]) s.description = r.string(root["description"], "description", 65536, true);
  const YAML::Node defaults = root["defaults"] ? root["defaults"] : YAML::Node(YAML::NodeType::Map);
  if (!defaults.IsMap()) r.fail(defaults.Mark(), "defaults", "must be a mapping", "write `defaults: {key: value}`");
  r.keys(defaults, case_keys(), "defaults.");
  const YAML::Node cases = root["cases"];
  if (!cases || !cases.IsSequence()) r.fail(root.Mark(), "cases", "missing or not a list", "add `cases:` with `- ...` entries");
  if (cases.size() > kMaxSuiteCases)
    r.fail(cases.Mark(), "cases", "the suite lists " + std::to_string(cases.size()) + " cases, past the limit of " +
                                      std::to_string(kMaxSuiteCases) + " per suite", "split it into smaller suite files");
  if (root["sequence"]) read_sequence(r, root["sequence"], s, sequence_seed);
  Expansion x{r, defaults, host_memory_budget(), s.cases, {}, s.sequence};
  for (const auto& e : cases) x.entry(e);
  if (s.sequence) order_steps(r, cases, s);
  return s;
}

Suite parse(const std::string& text, const std::string& file, std::optional<std::uint64_t> sequence_seed) {
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
    return parse_root(r, root, text, sequence_seed);
  } catch (const YAML::Exception& e) {  // a node the reads above did not expect: still bad input, never internal
    throw_bad_input(r.where(e.mark), "", "malformed YAML node: " + e.msg, "see docs/cases.md for the schema");
  }
}

}  // namespace

Suite load_suite_text(const std::string& text, const std::string& file_label, std::optional<std::uint64_t> sequence_seed) {
  return parse(text, file_label, sequence_seed);
}

Suite load_suite_file(const std::filesystem::path& file, std::optional<std::uint64_t> sequence_seed) {
  return parse(read_input_file(file, "suite", kSuiteFileLimit), file.string(), sequence_seed);
}

const CaseSpec& find_case(const Suite& s, const std::string& id) {
  for (const auto& c : s.cases)
    if (c.id == id) return c;
  throw_bad_input(s.file, "CASE", "no case with id '" + id + "'", "list ids with `moe-harness list --suite " + s.file + "`");
}

namespace {
// The suite file `name` names in `dir`; a name with no file there is bad input listing the suites there are.
std::filesystem::path named_suite(const std::filesystem::path& dir, const std::string& name) {
  const std::filesystem::path file = dir / (name + ".yaml");
  std::error_code ec;
  if (std::filesystem::exists(file, ec)) return file;
  std::vector<std::string> names;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".yaml") names.push_back(it->path().stem().string());
  std::sort(names.begin(), names.end());
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  throw_bad_input(dir.string(), "suite", "no suite named '" + printable(name) + "' (no file " + file.filename().string() +
                                             " there)",
                  names.empty() ? "give the path of a suite file, or set MOE_CASES_DIR to a folder of suites"
                                : "name one of " + known + ", or give the path of a suite file");
}
}  // namespace

std::filesystem::path resolve_suite(const std::string& s) {
  if (s.find('/') != std::string::npos || (s.size() > 5 && s.substr(s.size() - 5) == ".yaml")) return s;
  // $MOE_CASES_DIR, else the suites installed beside this executable (cmake --install puts them in
  // <prefix>/share/moe-harness/cases), else the source tree this binary was built from.
  if (const char* env = std::getenv("MOE_CASES_DIR")) return named_suite(env, s);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path().parent_path() / "share" / "moe-harness" / "cases";
    if (std::filesystem::is_directory(installed, ec)) return named_suite(installed, s);
  }
  return named_suite(MOE_CASES_DIR, s);
}

}  // namespace moe
