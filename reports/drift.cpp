#include "reports/drift.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iterator>
#include <tuple>
#include <nlohmann/json.hpp>

namespace moe {
namespace {

// Failing kinds in rank order, then the information kinds.
const std::vector<std::string> kKindOrder = {"status", "missing", "non_finite", "fixture", "contract", "token_count", "skipped",
                                             "min_cos", "max_rel", "token_cos", "variant", "new", "missing_skipped"};


// Skips and harness errors before the fixture was built carry no fingerprint (all zeros).
bool has_fingerprint(const std::string& f) { return !f.empty() && f.find_first_not_of('0') != std::string::npos; }

double metric(const ReportCase& c, const char* k) {
  auto it = c.metrics.find(k);
  return it == c.metrics.end() ? NAN : it->second;
}

// Timing is no verdict: a run without timing may leave it NaN.
bool timing_metric(const std::string& k) { return k == "kernel_us" || k.rfind("achieved_", 0) == 0; }

// What of a passing case cannot be compared: NaN verdict metrics, NaN tokens, and an absent min cos or max rel.
std::string uncomparable(const ReportCase& c) {
  std::vector<std::string> what;
  for (const auto& [k, v] : c.metrics)
    if (std::isnan(v) && !timing_metric(k)) what.push_back(k + " NaN");
  for (const char* k : {"min_cos", "max_rel"})
    if (!c.metrics.count(k)) what.push_back(std::string(k) + " absent");
  for (const auto* tokens : {&c.token_cos, &c.token_rel}) {
    const auto it = std::find_if(tokens->begin(), tokens->end(), [](double v) { return std::isnan(v); });
    if (it != tokens->end())
      what.push_back(fmt::format("token {} {} NaN", it - tokens->begin(), tokens == &c.token_cos ? "cos" : "rel"));
  }
  return fmt::format("{}", fmt::join(what, ", "));
}

void compare_pair(const ReportCase& b, const ReportCase& n, const DriftMargins& m, std::vector<DriftFinding>& out) {
  auto add = [&](const char* kind, std::string detail) { out.push_back({b.id, b.kernel, kind, std::move(detail)}); };
  if (b.status != n.status) {
    add(n.status == Status::skip ? "skipped" : "status",
        fmt::format("{} -> {}{}{}", name(b.status), name(n.status), n.reason.empty() ? "" : ": ", n.reason));
    out.back().new_failure = failing(n.status) && !failing(b.status);
  }
  if (b.variant != n.variant) add("variant", fmt::format("dispatched {} -> {}", b.variant, n.variant));
  if (has_fingerprint(b.fixture_fingerprint) && has_fingerprint(n.fixture_fingerprint) &&
      b.fixture_fingerprint != n.fixture_fingerprint)
    add("fixture", fmt::format("fixture fingerprint {} -> {}: the new run judged other inputs (another seed or "
                               "generator), so its metrics do not compare with the base's; rerun on the base's fixtures",
                               b.fixture_fingerprint, n.fixture_fingerprint));
  // Reports written before contracts (and skips) carry none: nothing to compare.
  if (!b.contract.effective.empty() && !n.contract.effective.empty() && b.contract.effective != n.contract.effective)
    add("contract", fmt::format("rounding contract {} ({}) -> {} ({}): the new run was judged against another "
                                "reference, so its metrics do not compare with the base's; rerun with the base's "
                                "contract (judge --contract, the case's pin) or refresh the baseline",
                                b.contract.effective, b.contract.source, n.contract.effective, n.contract.source));
  if (n.status != Status::pass) return;
  const std::string new_nan = uncomparable(n);
  if (!new_nan.empty()) add("non_finite", "in the new report: " + new_nan + "; no margin can pass it");
  if (b.status != Status::pass) return;
  const std::string base_nan = uncomparable(b);
  if (!base_nan.empty())
    add("non_finite", "in the base report: " + base_nan + "; nothing to compare against, refresh the baseline");
  // Each comparison below is false when either side is NaN: those are the findings above.
  const double bc = metric(b, "min_cos"), nc = metric(n, "min_cos");
  if (bc - nc > m.cos_drop) add("min_cos", fmt::format("{:.6f} -> {:.6f}", bc, nc));
  const double br = metric(b, "max_rel"), nr = metric(n, "max_rel");
  if (nr > m.rel_floor && nr > m.rel_factor * std::max(br, 0.0) && !std::isnan(br))
    add("max_rel", fmt::format("{:.3e} -> {:.3e}", br, nr));
  if (b.token_cos.size() != n.token_cos.size() || b.token_rel.size() != n.token_rel.size()) {
    add("token_count", fmt::format("{} -> {} tokens: not the same problem", b.token_cos.size(), n.token_cos.size()));
    return;
  }
  for (std::size_t t = 0; t < b.token_cos.size(); ++t)
    if (b.token_cos[t] - n.token_cos[t] > m.cos_drop) {
      add("token_cos", fmt::format("token {}: {:.6f} -> {:.6f}", t, b.token_cos[t], n.token_cos[t]));
      break;
    }
}

std::size_t kind_rank(const std::string& kind) {
  return std::size_t(std::find(kKindOrder.begin(), kKindOrder.end(), kind) - kKindOrder.begin());
}

}  // namespace

std::vector<DriftFinding> compare_reports(const ReadReport& base, const ReadReport& next, const DriftMargins& m,
                                          const std::vector<std::string>& kernels) {
  auto selected = [&](const ReportCase& c) {
    return kernels.empty() || std::find(kernels.begin(), kernels.end(), c.kernel) != kernels.end();
  };
  std::vector<DriftFinding> out;
  for (const ReportCase& b : base.cases) {
    if (!selected(b)) continue;
    if (const ReportCase* n = next.find(b.id, b.kernel)) {
      compare_pair(b, *n, m, out);
    } else if (b.status == Status::skip) {
      out.push_back({b.id, b.kernel, "missing_skipped",
                     "skipped in the base run (" + b.reason + "), absent from the new one: nothing was lost", false});
    } else {
      out.push_back({b.id, b.kernel, "missing", "present in the base run (" + to_string(b.status) + "), absent from the new one"});
    }
  }
  for (const ReportCase& n : next.cases)
    if (selected(n) && !base.find(n.id, n.kernel)) {
      out.push_back({n.id, n.kernel, "new", "not in the base run; " + to_string(n.status) +
                                                (n.reason.empty() ? "" : ": " + n.reason), false, failing(n.status)});
    }
  std::stable_sort(out.begin(), out.end(), [](const DriftFinding& a, const DriftFinding& b) {
    return std::make_tuple(!a.fails, !a.new_failure, kind_rank(a.kind)) <
           std::make_tuple(!b.fails, !b.new_failure, kind_rank(b.kind));
  });
  return out;
}

int drift_failures(const std::vector<DriftFinding>& f) {
  return int(std::count_if(f.begin(), f.end(), [](const DriftFinding& d) { return d.fails; }));
}

std::string drift_markdown(const ReadReport& base, const ReadReport& next, const std::vector<DriftFinding>& f) {
  std::string s = fmt::format("# moe-harness compare\n\n- base: {} ({}, {})\n- new: {} ({}, {})\n- {} finding(s), {} failing\n\n",
                              base.file, base.harness_commit, base.device_arch.empty() ? "no GPU" : base.device_arch,
                              next.file, next.harness_commit, next.device_arch.empty() ? "no GPU" : next.device_arch,
                              f.size(), drift_failures(f));
  if (f.empty()) return s + "No drift.\n";
  s += "| kind | fails | kernel | case | detail |\n|---|---|---|---|---|\n";
  for (const auto& d : f) {
    std::string detail = d.detail;
    std::replace_if(detail.begin(), detail.end(), [](char c) { return c == '|' || c == '\n'; }, ' ');
    s += fmt::format("| {} | {} | {} | `{}` | {} |\n", d.kind, d.fails ? "yes" : "no", d.kernel, d.id, detail);
  }
  return s;
}

std::string drift_json(const std::vector<DriftFinding>& f) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& d : f)
    j.push_back({{"kind", d.kind}, {"fails", d.fails}, {"new_failure", d.new_failure}, {"kernel", d.kernel},
                 {"id", d.id}, {"detail", d.detail}});
  return nlohmann::ordered_json{{"failing", drift_failures(f)}, {"findings", j}}.dump(1) + "\n";
}

}  // namespace moe
