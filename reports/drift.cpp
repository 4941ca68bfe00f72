#include "reports/drift.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace moe {

std::vector<DriftFinding> compare_reports(const ReadReport& base, const ReadReport& next, const DriftMargins& m) {
  std::vector<DriftFinding> out;
  for (const ReportCase& b : base.cases) {
    const ReportCase* n = next.find(b.id, b.kernel);
    if (!n) { out.push_back({b.id, b.kernel, "missing", "present in the base run, absent from the new one"}); continue; }
    if (b.status != n->status) {
      const bool to_skip = n->status == "skip";
      out.push_back({b.id, b.kernel, to_skip ? "skipped" : "status",
                     fmt::format("{} -> {}{}{}", b.status, n->status, n->reason.empty() ? "" : ": ", n->reason)});
    }
    if (b.variant != n->variant) out.push_back({b.id, b.kernel, "variant", fmt::format("dispatched {} -> {}", b.variant, n->variant)});
    auto metric = [](const ReportCase& c, const char* k) {
      auto it = c.metrics.find(k);
      return it == c.metrics.end() ? -1.0 : it->second;
    };
    if (b.status == "pass" && n->status == "pass") {
      const double bc = metric(b, "min_cos"), nc = metric(*n, "min_cos");
      if (bc - nc > m.cos_drop) out.push_back({b.id, b.kernel, "min_cos", fmt::format("{:.6f} -> {:.6f}", bc, nc)});
      const double br = metric(b, "max_rel"), nr = metric(*n, "max_rel");
      if (nr > m.rel_floor && nr > m.rel_factor * std::max(br, 0.0))
        out.push_back({b.id, b.kernel, "max_rel", fmt::format("{:.3e} -> {:.3e}", br, nr)});
      if (b.token_cos.size() == n->token_cos.size()) {
        for (std::size_t t = 0; t < b.token_cos.size(); ++t)
          if (b.token_cos[t] - n->token_cos[t] > m.cos_drop) {
            out.push_back({b.id, b.kernel, "token_cos", fmt::format("token {}: {:.6f} -> {:.6f}", t, b.token_cos[t], n->token_cos[t])});
            break;
          }
      }
    }
  }
  for (const ReportCase& n : next.cases)
    if (!base.find(n.id, n.kernel)) out.push_back({n.id, n.kernel, "new", "not in the base run"});
  return out;
}

int drift_failures(const std::vector<DriftFinding>& f) {
  return int(std::count_if(f.begin(), f.end(), [](const DriftFinding& d) { return d.kind != "new"; }));
}

std::string drift_markdown(const ReadReport& base, const ReadReport& next, const std::vector<DriftFinding>& f) {
  std::string s = fmt::format("# moe-harness compare\n\n- base: {} ({}, {})\n- new: {} ({}, {})\n- {} finding(s), {} failing\n\n",
                              base.file, base.harness_commit, base.device_arch.empty() ? "no GPU" : base.device_arch,
                              next.file, next.harness_commit, next.device_arch.empty() ? "no GPU" : next.device_arch,
                              f.size(), drift_failures(f));
  if (f.empty()) return s + "No drift.\n";
  s += "| kind | kernel | case | detail |\n|---|---|---|---|\n";
  for (const auto& d : f) s += fmt::format("| {} | {} | `{}` | {} |\n", d.kind, d.kernel, d.id, d.detail);
  return s;
}

std::string drift_json(const std::vector<DriftFinding>& f) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& d : f) j.push_back({{"kind", d.kind}, {"kernel", d.kernel}, {"id", d.id}, {"detail", d.detail}});
  return nlohmann::ordered_json{{"failing", drift_failures(f)}, {"findings", j}}.dump(1) + "\n";
}

}  // namespace moe
