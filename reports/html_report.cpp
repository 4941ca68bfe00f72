// The HTML page: head and style, the run's provenance, a banner when the run is incomplete, the counts, drift
// against a baseline (ranked as compare ranks it), the case tables, the per-token sections of failing cases, then
// the time by phase. Written as it goes into a stream.
#include "reports/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "reports/html_parts.hpp"

namespace moe {
namespace html {

std::string esc(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string anchor(const ReportCase& c) {
  std::string a = "case-" + c.kernel + "-" + c.id;
  for (char& ch : a)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') ch = '_';
  return a;
}

std::optional<double> metric(const ReportCase& c, const char* key) {
  auto it = c.metrics.find(key);
  return it == c.metrics.end() ? std::nullopt : std::optional<double>(it->second);
}

std::string num_cell(std::optional<double> v, const char* spec) {
  if (!v) return "<td class=\"num\"></td>";
  if (std::isnan(*v)) return "<td class=\"num fail\">NaN</td>";
  if (std::isinf(*v)) return *v > 0 ? "<td class=\"num fail\">Inf</td>" : "<td class=\"num fail\">-Inf</td>";
  return "<td class=\"num\">" + fmt::format(fmt::runtime(spec), *v) + "</td>";
}

void timing_table(std::ostream& o, const CaseTiming& t, const char* id, const char* caption) {
  put(o, "<table{} class=\"timing\"><caption>{}</caption><tr>", *id ? fmt::format(" id=\"{}\"", id) : "", caption);
  double sum = 0;
  for (auto [name, field] : kTimingPhases) {
    put(o, "<th>{}</th>", name);
    sum += t.*field;
  }
  o << "<th>total</th></tr><tr>";
  for (auto [name, field] : kTimingPhases) put(o, "<td class=\"num\" data-phase=\"{}\">{:.3f}</td>", name, t.*field);
  put(o, "<td class=\"num\">{:.3f}</td></tr></table>\n", sum);
}

}  // namespace html

namespace {
using html::esc;
using html::put;

const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1b1b1b;background:#fff}
h1{font-size:20px;margin:0 0 8px} h2{font-size:16px;margin:24px 0 8px} h3{font-size:14px;margin:0;display:inline}
table{border-collapse:collapse;margin:8px 0} caption{text-align:left;font-size:12px;color:#555} td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f2f2f2} td.k{white-space:nowrap} code{font-size:12px} .num{text-align:right;font-variant-numeric:tabular-nums}
.banner{background:#c0152b;color:#fff;font-weight:600;padding:8px 12px;border-radius:6px}
.pass{color:#0a7d32;font-weight:600} .fail,.error{color:#c0152b;font-weight:600} .skip{color:#777}
.badge{display:inline-block;padding:2px 10px;border-radius:10px;margin-right:6px;color:#fff;font-weight:600}
.b-pass{background:#0a7d32} .b-fail{background:#c0152b} .b-skip{background:#888} .b-error{background:#7a1fa2}
details{border:1px solid #ddd;border-radius:6px;padding:6px 10px;margin:8px 0} summary{cursor:pointer}
td details{border:none;padding:0;margin:2px 0}
.plots{display:flex;flex-wrap:wrap;gap:12px;margin:6px 0}
svg.plot{background:#fafafa;border:1px solid #e4e4e4}
svg .t{font-size:12px;fill:#333} svg .ax{font-size:10px;fill:#666;text-anchor:end}
svg .grid{stroke:#e6e6e6} svg .axis{stroke:#999}
svg .thr{stroke:#e8a317;stroke-width:1.5;stroke-dasharray:5 4}
svg .data{fill:none;stroke-width:2} svg .data.cos{stroke:#1f5fbf} svg .data.rel{stroke:#e0561a}
svg circle.data.cos{fill:#1f5fbf;stroke:none} svg circle.data.rel{fill:#e0561a;stroke:none}
svg.headroom .data{stroke-width:1.5}
svg .nan{fill:#c0152b;stroke:none} svg .bad{font-size:11px;fill:#c0152b;text-anchor:end}
.legend .cos{color:#1f5fbf} .legend .rel{color:#e0561a}
pre{background:#f6f6f6;padding:6px;overflow:auto;font-size:12px;max-height:260px}
)";

// Counts the plots the browser laid out with a non-empty box, and when that was done (read by the headless tests).
const char* kScript = R"(<script>
addEventListener('load',function(){var n=0;document.querySelectorAll('svg.plot').forEach(function(s){
var d=s.querySelectorAll('.data'),ok=d.length>0;d.forEach(function(e){var b=e.getBBox();
if(!(b.width>0||b.height>0||e.tagName==='circle'))ok=false;});if(ok)n++;});
document.body.setAttribute('data-plots-drawn',n);document.body.setAttribute('data-render-ms',Math.round(performance.now()));});
</script>)";

void header(std::ostream& o, const ReadReport& r) {
  int pass = 0, fail = 0, skip = 0, err = 0;
  for (const auto& c : r.cases) {
    pass += c.status == Status::pass; skip += c.status == Status::skip; err += c.status == Status::error;
    fail += failing(c.status) && c.status != Status::error;
  }
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  put(o, "<title>moe-harness: {} ({} passed, {} failed)</title><style>{}</style></head><body>\n", esc(r.suite), pass,
      fail + err, kStyle);
  put(o, "<h1>moe-harness run: suite <code>{}</code></h1>\n", esc(r.suite));
  std::string kernels;
  for (const auto& k : r.kernels) kernels += (kernels.empty() ? "" : ", ") + esc(k);
  put(o, "<p>harness {} &middot; device: {} &middot; kernels: {} &middot; {} to {}</p>\n", esc(r.harness_commit),
      r.device_arch.empty() ? "none (" + esc(r.device_message) + ")" : esc(r.device_name + " " + r.device_arch), kernels,
      esc(r.start_time), esc(r.end_time));
  // An interrupted or killed run says so above everything else: its counts are of the cases it judged, not of the
  // selection, and "No failing case" below is no verdict on the cases it never reached.
  if (r.incomplete)
    put(o, "<p id=\"incomplete\" class=\"banner\">INCOMPLETE RUN: {}. The counts and tables below are of the {} "
           "case(s) judged before it stopped; the others were not judged.</p>\n",
        esc(r.incomplete_reason.empty() ? std::string("the run stopped before judging every selected case")
                                        : r.incomplete_reason),
        r.cases.size());
  put(o, "<p id=\"summary\"><span class=\"badge b-pass\">{} passed</span><span class=\"badge b-fail\">{} failed</span>"
         "<span class=\"badge b-skip\">{} skipped</span><span class=\"badge b-error\">{} errors</span> of {}</p>\n",
      pass, fail, skip, err, r.cases.size());
}

void drift_section(std::ostream& o, const ReadReport& base, const std::vector<DriftFinding>& drift) {
  put(o, "<h2 id=\"drift\">Drift against {} ({} finding(s), {} failing)</h2>\n", esc(base.file), drift.size(),
      drift_failures(drift));
  put(o, "<p>baseline: harness {}, device {}. New failures first; grey rows are information, not drift.</p>\n",
      esc(base.harness_commit), base.device_arch.empty() ? std::string("none") : esc(base.device_name + " " + base.device_arch));
  if (drift.empty()) return void(o << "<p>No drift beyond the margins.</p>\n");
  o << "<table id=\"drift-table\"><tr><th>kind</th><th>kernel</th><th>case</th><th>detail</th></tr>\n";
  for (const auto& f : drift)
    put(o, "<tr class=\"drift\" data-kind=\"{0}\"><td class=\"{1}\">{0}</td><td class=\"k\">{2}</td><td><code>{3}</code></td><td>{4}</td></tr>\n",
        esc(f.kind), f.fails ? "fail" : "skip", esc(f.kernel), esc(f.id), esc(f.detail));
  o << "</table>\n";
}

}  // namespace

void write_html(std::ostream& o, const ReadReport& r, const HtmlOptions& opt) {
  header(o, r);
  if (opt.baseline && opt.drift) drift_section(o, *opt.baseline, *opt.drift);
  // Failing cases with per-token arrays get a section, errors first, up to the limit.
  std::vector<const ReportCase*> detailed, failing_measured;
  for (const ReportCase& c : r.cases)
    if (failing(c.status) && !(c.token_cos.empty() && c.token_rel.empty())) failing_measured.push_back(&c);
  std::stable_sort(failing_measured.begin(), failing_measured.end(),
                   [](auto* a, auto* b) { return (a->status == Status::error) > (b->status == Status::error); });
  detailed.assign(failing_measured.begin(),
                  failing_measured.begin() + std::ptrdiff_t(std::min(failing_measured.size(), opt.detail_limit)));
  html::write_case_tables(o, r, detailed);
  put(o, "<h2>Per token: failing cases ({})</h2>\n", detailed.size());
  o << "<p>Each plot shows every token (log scale, lower is better); the dashed line is the case's threshold; a red "
       "marker at the top is a token with non-finite or unwritten elements (cos and rel NaN).</p>\n";
  // Many failing cases share a budget of plotted points, so a run where everything failed stays readable.
  const std::size_t per_plot = std::clamp<std::size_t>(opt.point_budget / std::max<std::size_t>(1, 2 * detailed.size()),
                                                       std::min<std::size_t>(64, opt.max_points), opt.max_points);
  for (const ReportCase* c : detailed) html::write_case_detail(o, *c, per_plot);
  if (detailed.size() < failing_measured.size())
    put(o, "<p class=\"fail\">{} more failing case(s) have per-token arrays: listed in the table above, not plotted "
           "(`moe-harness html --detail-limit N` plots more).</p>\n",
        failing_measured.size() - detailed.size());
  // The run's time after its verdicts: a reader comes for the failures first.
  html::timing_table(o, timing_total(r.cases), "timing", "Time by phase: seconds of wall time summed over the cases");
  o << kScript << "\n</body></html>\n";
}

std::string to_html(const ReadReport& r, const HtmlOptions& opt) {
  std::ostringstream s;
  write_html(s, r, opt);
  return s.str();
}

}  // namespace moe
