// The case part of the HTML report: failing cases first (one row each, errors before failures), skips grouped by
// their reason, passing cases summarised by one plot of how much of each threshold they used and collapsed into a
// closed list, and the per-token section of each failing case. Passing cases get no per-case plot: on a large run
// they are the bulk, and a pass is told by its numbers.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <regex>
#include <set>

#include "reports/html_parts.hpp"

namespace moe::html {
namespace {

int failing_rank(Status status) { return status == Status::error ? 0 : status == Status::fail ? 1 : 2; }

std::string case_link(const ReportCase& c, bool linked) {
  return linked ? "<a href=\"#" + anchor(c) + "\"><code>" + esc(c.id) + "</code></a>" : "<code>" + esc(c.id) + "</code>";
}

// The share of a threshold a value used (1: at the threshold). NaN stays NaN; a zero threshold allows only zero.
std::optional<double> share(std::optional<double> v, std::optional<double> limit) {
  if (!v || !limit) return std::nullopt;
  if (std::isnan(*v)) return NAN;
  if (*limit <= 0) return *v <= 0 ? 0.0 : INFINITY;
  return *v / *limit;
}

struct Headroom {
  std::optional<double> cos, rel;
  std::optional<double> used() const {  // the larger share; NaN when either is NaN
    std::optional<double> w;
    for (const auto& u : {cos, rel})
      if (u) w = std::isnan(*u) || (w && std::isnan(*w)) ? NAN : std::max(w.value_or(-INFINITY), *u);
    return w;
  }
  double sort_key() const {  // NaN first, unmeasured last
    const auto u = used();
    return !u ? -INFINITY : std::isnan(*u) ? INFINITY : *u;
  }
};

Headroom headroom(const ReportCase& c) {
  auto deficit = [](std::optional<double> x) { return x ? std::optional<double>(1.0 - *x) : std::nullopt; };
  // strict_*: the tokens min_cos and max_rel judged (those of the requantization band, when it held, excluded).
  const std::optional<double> judged = metric(c, "strict_min_cos"), judged_rel = metric(c, "strict_max_rel");
  return {share(deficit(judged ? judged : metric(c, "min_cos")), deficit(metric(c, "threshold_min_cos"))),
          share(judged_rel ? judged_rel : metric(c, "max_rel"), metric(c, "threshold_max_rel"))};
}

void failing_table(std::ostream& o, const std::vector<const ReportCase*>& cases, const std::set<const ReportCase*>& linked) {
  put(o, "<h2>Failing cases ({})</h2>\n", cases.size());
  if (cases.empty()) return void(o << "<p id=\"failing\" class=\"pass\">No failing case.</p>\n");
  o << "<table id=\"failing\"><tr><th>status</th><th>kernel</th><th>case</th><th>check</th><th>min cos</th>"
       "<th>max rel</th><th>variant</th><th>reason</th></tr>\n";
  for (const ReportCase* c : cases)
    put(o, "<tr class=\"case\"><td class=\"{0}\">{0}</td><td class=\"k\">{1}</td><td>{2}</td><td>{3}</td>{4}{5}<td>{6}</td>"
           "<td>{7}</td></tr>\n",
        esc(to_string(c->status)), esc(c->kernel), case_link(*c, linked.count(c)), esc(to_string(c->failed_check)),
        num_cell(metric(*c, "min_cos"), "{:.7f}"), num_cell(metric(*c, "max_rel"), "{:.2e}"), esc(c->variant), esc(c->reason));
  o << "</table>\n";
}

void skip_groups(std::ostream& o, const std::vector<const ReportCase*>& cases) {
  std::map<std::string, std::vector<const ReportCase*>> by_reason;
  for (const ReportCase* c : cases) by_reason[c->reason].push_back(c);
  std::vector<const std::pair<const std::string, std::vector<const ReportCase*>>*> groups;
  for (const auto& g : by_reason) groups.push_back(&g);
  std::stable_sort(groups.begin(), groups.end(), [](auto* a, auto* b) { return a->second.size() > b->second.size(); });
  if (cases.empty()) return void(o << "<h2>Skipped cases (0)</h2>\n<p id=\"skipped\">No skipped case.</p>\n");
  put(o, "<h2>Skipped cases ({}, {} distinct reason{})</h2>\n", cases.size(), groups.size(), groups.size() == 1 ? "" : "s");
  o << "<table id=\"skipped\"><tr><th>cases</th><th>kernels</th><th>reason</th></tr>\n";
  for (const auto* g : groups) {
    std::set<std::string> kernels;
    for (const ReportCase* c : g->second) kernels.insert(esc(c->kernel));
    put(o, "<tr class=\"skip-group\" data-count=\"{0}\"><td class=\"num skip\">{0}</td><td class=\"k\">{1}</td><td>{2}"
           "<details><summary>the {0} case{3}</summary>",
        g->second.size(), fmt::join(kernels, ", "), esc(g->first), g->second.size() == 1 ? "" : "s");
    for (const ReportCase* c : g->second) put(o, "<code>{}</code> {}<br>", esc(c->id), esc(c->kernel));
    o << "</details></td></tr>\n";
  }
  o << "</table>\n";
}

// Six cells: z, threshold, effect, floor, where, verdict (one cell with the reason when it did not run).
std::string stat_cells(const StatisticRecord& s) {
  if (!s.ran()) return fmt::format("<td colspan=\"6\" class=\"skip\">{}</td>", esc(s.status));
  return fmt::format("{}<td class=\"num\">{:g}</td>{}<td class=\"num\">{:g}</td><td>{}</td><td class=\"{}\">{}</td>",
                     num_cell(s.z, "{:.4g}"), s.z_threshold, num_cell(s.effect, "{:+.3e}"), s.effect_floor, esc(s.at),
                     s.failed ? "fail" : "pass", s.failed ? "FAIL" : "pass");
}

// The passing cases' systematic statistics: for each, the case that came closest to failing it.
void systematic_margins(std::ostream& o, const std::vector<const ReportCase*>& cases) {
  std::map<std::string, std::pair<const ReportCase*, const StatisticRecord*>> worst;
  std::map<std::string, std::pair<int, int>> counts;  // ran, not run
  for (const ReportCase* c : cases)
    for (const StatisticRecord& s : c->systematic) {
      auto& n = counts[s.name];
      if (!s.ran()) { ++n.second; continue; }
      ++n.first;
      auto& w = worst[s.name];
      if (!w.second || s.closeness() > w.second->closeness()) w = {c, &s};
    }
  if (counts.empty()) return;
  o << "<p>Systematic statistics of the passing cases (each fails when |z| passes its threshold AND |effect| its "
       "floor): the case closest to failing each, with the share of the nearer limit it used.</p>\n"
       "<table id=\"systematic-margins\"><tr><th>statistic</th><th>ran / not run</th><th>z</th><th>threshold</th>"
       "<th>effect</th><th>floor</th><th>at</th><th>verdict</th><th>share used</th><th>case</th></tr>\n";
  for (const auto& [name, n] : counts) {
    const auto it = worst.find(name);
    const std::string head = fmt::format("<td>{}</td><td class=\"num\">{} / {}</td>", esc(name), n.first, n.second);
    if (it == worst.end()) { put(o, "<tr>{}<td colspan=\"8\" class=\"skip\">not run on any passing case</td></tr>\n", head); continue; }
    put(o, "<tr>{}{}{}<td><code>{}</code></td></tr>\n", head, stat_cells(*it->second.second),
        num_cell(100 * it->second.second->closeness(), "{:.1f}%"), esc(it->second.first->id));
  }
  o << "</table>\n";
}

void passing_summary(std::ostream& o, const std::vector<const ReportCase*>& cases) {
  std::vector<std::pair<const ReportCase*, Headroom>> rows;
  for (const ReportCase* c : cases) rows.emplace_back(c, headroom(*c));
  std::stable_sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.second.sort_key() > b.second.sort_key(); });
  put(o, "<h2 id=\"passing-cases\">Passing cases ({})</h2>\n", cases.size());
  if (cases.empty()) return void(o << "<p id=\"passing\">No passing case.</p>\n");
  Series cos{{}, "cos"}, rel{{}, "rel"};
  for (const auto& [c, h] : rows)
    if (h.cos && h.rel) {
      cos.values.push_back(*h.cos);
      rel.values.push_back(*h.rel);
    }
  if (!cos.values.empty()) {
    o << "<p>How much of its thresholds each passing case used (1 &#8722; cos against 1 &#8722; the min cos threshold, "
         "max rel against the max rel threshold; the dashed line is the threshold), closest first.</p>\n";
    write_plot(o, {cos.values.size() < rows.size() ? fmt::format("share of the thresholds used ({} of them measured)", cos.values.size())
                                                     : std::string("share of the thresholds used"),
                   "headroom", 1e-4, 10.0, 1.0, 512, "case"},
               {cos, rel});
    o << "<p class=\"legend\"><span class=\"cos\">&#9632; 1 &#8722; cos</span> <span class=\"rel\">&#9632; max rel</span></p>\n";
  }
  systematic_margins(o, cases);
  put(o, "<details id=\"passing\"><summary>the {} passing case{}, closest to a threshold first</summary>\n", rows.size(),
      rows.size() == 1 ? "" : "s");
  o << "<table><tr><th>kernel</th><th>case</th><th>min cos</th><th>max rel</th><th>threshold used</th><th>variant</th></tr>\n";
  for (const auto& [c, h] : rows) {
    const auto used = h.used();
    put(o, "<tr class=\"case\"><td class=\"k\">{}</td><td><code>{}</code></td>{}{}{}<td>{}</td></tr>\n", esc(c->kernel),
        esc(c->id), num_cell(metric(*c, "min_cos"), "{:.7f}"), num_cell(metric(*c, "max_rel"), "{:.2e}"),
        num_cell(used ? std::optional<double>(100 * *used) : std::nullopt, "{:.1f}%"), esc(c->variant));
  }
  o << "</table></details>\n";
}

}  // namespace

void write_case_tables(std::ostream& o, const ReadReport& r, const std::vector<const ReportCase*>& detailed) {
  std::vector<const ReportCase*> fails, skips, passes;
  for (const ReportCase& c : r.cases)
    (c.status == Status::pass ? passes : c.status == Status::skip ? skips : fails).push_back(&c);
  std::stable_sort(fails.begin(), fails.end(),
                   [](auto* a, auto* b) { return failing_rank(a->status) < failing_rank(b->status); });
  failing_table(o, fails, {detailed.begin(), detailed.end()});
  skip_groups(o, skips);
  passing_summary(o, passes);
}

void write_case_detail(std::ostream& o, const ReportCase& c, std::size_t max_points) {
  put(o, "<details open id=\"{}\" class=\"detail\"><summary><span class=\"{}\">{}</span> <h3><code>{}</code></h3> {}</summary>\n",
      anchor(c), esc(to_string(c.status)), esc(to_string(c.status)), esc(c.id), esc(c.kernel));
  if (!c.reason.empty()) put(o, "<p class=\"{}\">{}</p>\n", esc(to_string(c.status)), esc(c.reason));
  if (!c.contract.effective.empty())
    put(o, "<p class=\"contract\">rounding contract <code>{}</code> ({}; declared <code>{}</code>{})</p>\n",
        esc(c.contract.effective), esc(c.contract.source), esc(c.contract.declared),
        c.contract.not_applied.empty() ? "" : "; not applied <code>" + esc(c.contract.not_applied) + "</code>");
  Series deficit{std::vector<double>(c.token_cos.size()), "cos"};
  for (std::size_t i = 0; i < c.token_cos.size(); ++i) deficit.values[i] = 1.0 - c.token_cos[i];  // NaN stays NaN
  const double cos_limit = 1.0 - metric(c, "threshold_min_cos").value_or(NAN);
  o << "<div class=\"plots\">";
  write_plot(o, {"1 &#8722; cos per token", "cos", 1e-10, 1.0, cos_limit, max_points, "token"}, {deficit});
  write_plot(o, {"relative error per token", "rel", 1e-8, 1.0, metric(c, "threshold_max_rel").value_or(NAN), max_points, "token"},
             {Series{c.token_rel, "rel"}});
  o << "</div>\n";
  // Worst tokens: non-finite ones (cos or rel) first, then by relative error.
  auto at = [](const std::vector<double>& v, std::size_t i) { return i < v.size() ? v[i] : NAN; };
  auto badness = [&](std::size_t i) {
    const double cs = at(c.token_cos, i), rl = at(c.token_rel, i);
    return std::isfinite(cs) && std::isfinite(rl) ? rl : INFINITY;
  };
  std::vector<std::size_t> order(std::max(c.token_cos.size(), c.token_rel.size()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return badness(a) > badness(b); });
  // The experts and routing weights of the tokens the verdict's details list (verdict/judge.cpp writes a line
  // "TOKEN: cos C, rel R, experts [..], weights [..]" per worst token): report.json carries them only there.
  std::map<std::size_t, std::pair<std::string, std::string>> routing;
  static const std::regex line(R"(^\s+(\d+): cos [^\n]*?, experts \[([^\]\n]*)\], weights \[([^\]\n]*)\]$)",
                               std::regex::multiline);
  for (std::sregex_iterator it(c.details.begin(), c.details.end(), line), end; it != end; ++it)
    routing[std::stoul((*it)[1].str())] = {(*it)[2].str(), (*it)[3].str()};
  o << "<table><tr><th>worst tokens</th><th>cos</th><th>rel</th><th>experts</th><th>weights</th></tr>";
  for (std::size_t k = 0; k < std::min<std::size_t>(5, order.size()); ++k) {
    const auto r = routing.find(order[k]);
    put(o, "<tr><td class=\"num\">{}</td>{}{}<td>{}</td><td>{}</td></tr>", order[k],
        num_cell(at(c.token_cos, order[k]), "{:.7f}"), num_cell(at(c.token_rel, order[k]), "{:.3e}"),
        r == routing.end() ? "" : esc(r->second.first), r == routing.end() ? "" : esc(r->second.second));
  }
  o << "</table>\n";
  if (!c.systematic.empty()) {
    o << "<table class=\"systematic\"><tr><th>systematic</th><th>z</th><th>threshold</th><th>effect</th><th>floor</th>"
         "<th>at</th><th>verdict</th></tr>";
    for (const StatisticRecord& s : c.systematic) put(o, "<tr><td>{}</td>{}</tr>", esc(s.name), stat_cells(s));
    o << "</table>\n";
  }
  if (!c.details.empty()) put(o, "<pre>{}</pre>\n", esc(c.details));
  timing_table(o, c.timing, "", "Time by phase (seconds)");
  o << "</details>\n";
}

}  // namespace moe::html
