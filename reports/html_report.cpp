#include "reports/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>

namespace moe {
namespace {

std::string esc(const std::string& s) {
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

double metric(const ReportCase& c, const char* k, double dflt = NAN) {
  auto it = c.metrics.find(k);
  return it == c.metrics.end() ? dflt : it->second;
}

// A log10-scale plot of per-token "badness" (higher is worse) with the threshold as a dashed line. Values at or
// below `lo` sit on the floor; non-finite ones are drawn at the top in the failure colour.
std::string plot(const std::vector<double>& v, double threshold, const char* title, const char* cls, double lo,
                 std::size_t max_points) {
  const int W = 560, Hh = 150, L = 52, R = 8, T = 20, B = 24;
  const double hi = 1.0, llo = std::log10(lo), lhi = std::log10(hi);
  auto y_of = [&](double x) {
    if (!std::isfinite(x)) return double(T);
    const double l = std::log10(std::clamp(x, lo, hi));
    return T + (lhi - l) / (lhi - llo) * (Hh - T - B);
  };
  const std::size_t n = v.size();
  const std::size_t bins = std::min(n, max_points);
  std::string pts;
  int nonfinite = 0;
  for (std::size_t b = 0; b < bins; ++b) {
    const std::size_t a = b * n / bins, e = std::max(a + 1, (b + 1) * n / bins);
    double worst = -1;
    for (std::size_t i = a; i < e; ++i) {
      if (!std::isfinite(v[i])) { worst = INFINITY; break; }
      worst = std::max(worst, v[i]);
    }
    nonfinite += !std::isfinite(worst);
    const double x = L + (bins == 1 ? 0.5 : double(b) / double(bins - 1)) * (W - L - R);
    pts += fmt::format("{:.1f},{:.1f} ", x, y_of(worst));
  }
  std::string s = fmt::format(R"(<svg class="plot {}" width="{}" height="{}" viewBox="0 0 {} {}" role="img" aria-label="{}">)",
                              cls, W, Hh, W, Hh, title);
  s += fmt::format(R"(<text x="{}" y="13" class="t">{}{}</text>)", L, title,
                   bins < n ? fmt::format(" ({} tokens in {} bins, each bin's worst)", n, bins) : fmt::format(" ({} tokens)", n));
  for (double d = llo; d <= lhi + 1e-9; d += 2) {
    const double y = y_of(std::pow(10.0, d));
    s += fmt::format(R"(<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" class="grid"/><text x="{}" y="{:.1f}" class="ax">1e{}</text>)",
                     L, W - R, y, y, L - 4, y + 4, int(d));
  }
  s += fmt::format(R"(<line x1="{}" x2="{}" y1="{}" y2="{}" class="axis"/>)", L, W - R, Hh - B, Hh - B);
  s += fmt::format(R"(<text x="{}" y="{}" class="ax" text-anchor="start">token 0</text><text x="{}" y="{}" class="ax">{}</text>)",
                   L, Hh - 8, W - R, Hh - 8, n ? n - 1 : 0);
  if (std::isfinite(threshold) && threshold > 0) {
    const double y = y_of(threshold);
    s += fmt::format(R"(<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" class="thr"><title>threshold {:.3g}</title></line>)",
                     L, W - R, y, y, threshold);
  }
  if (bins == 1)
    s += fmt::format(R"(<circle class="data" cx="{}" r="3.5" cy="{}"/>)", pts.substr(0, pts.find(',')),
                     pts.substr(pts.find(',') + 1));
  else
    s += fmt::format(R"(<polyline class="data" points="{}"/>)", pts);
  if (nonfinite) s += fmt::format(R"(<text x="{}" y="{}" class="bad">{} non-finite</text>)", W - R, T + 12, nonfinite);
  return s + "</svg>";
}

const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1b1b1b;background:#fff}
h1{font-size:20px;margin:0 0 8px} h2{font-size:16px;margin:24px 0 8px} h3{font-size:14px;margin:0;display:inline}
table{border-collapse:collapse;margin:8px 0} td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f2f2f2} td.k{white-space:nowrap} code{font-size:12px} .num{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#0a7d32;font-weight:600} .fail,.error{color:#c0152b;font-weight:600} .skip{color:#777}
.badge{display:inline-block;padding:2px 10px;border-radius:10px;margin-right:6px;color:#fff;font-weight:600}
.b-pass{background:#0a7d32} .b-fail{background:#c0152b} .b-skip{background:#888} .b-error{background:#7a1fa2}
details{border:1px solid #ddd;border-radius:6px;padding:6px 10px;margin:8px 0} summary{cursor:pointer}
.plots{display:flex;flex-wrap:wrap;gap:12px;margin:6px 0}
svg.plot{background:#fafafa;border:1px solid #e4e4e4}
svg .t{font-size:12px;fill:#333} svg .ax{font-size:10px;fill:#666;text-anchor:end}
svg .grid{stroke:#e6e6e6} svg .axis{stroke:#999}
svg .thr{stroke:#e8a317;stroke-width:1.5;stroke-dasharray:5 4}
svg.cos .data{fill:none;stroke:#1f5fbf;stroke-width:2} svg.rel .data{fill:none;stroke:#e0561a;stroke-width:2}
svg.cos circle.data{fill:#1f5fbf;stroke:none} svg.rel circle.data{fill:#e0561a;stroke:none}
svg .bad{font-size:11px;fill:#c0152b;text-anchor:end}
pre{background:#f6f6f6;padding:6px;overflow:auto;font-size:12px;max-height:260px}
)";

// Counts the plots the browser laid out with a non-empty box (read by the headless test); nothing else.
const char* kScript = R"(<script>
addEventListener('load',function(){var n=0;document.querySelectorAll('svg.plot .data').forEach(function(e){
var b=e.getBBox();if(b.width>0||b.height>0||e.tagName==='circle')n++;});document.body.setAttribute('data-plots-drawn',n);});
</script>)";

}  // namespace

std::string to_html(const ReadReport& r, const HtmlOptions& opt) {
  int pass = 0, fail = 0, skip = 0, err = 0;
  for (const auto& c : r.cases) {
    pass += c.status == "pass"; fail += c.status == "fail"; skip += c.status == "skip"; err += c.status == "error";
  }
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  h += fmt::format("<title>moe-harness: {} ({} passed, {} failed)</title><style>{}</style></head><body>\n",
                   esc(r.suite), pass, fail, kStyle);
  h += fmt::format("<h1>moe-harness run: suite <code>{}</code></h1>\n", esc(r.suite));
  std::string kernels;
  for (const auto& k : r.kernels) kernels += (kernels.empty() ? "" : ", ") + esc(k);
  h += fmt::format("<p>harness {} &middot; device: {} &middot; kernels: {} &middot; {} to {}</p>\n", esc(r.harness_commit),
                   r.device_arch.empty() ? "none (" + esc(r.device_message) + ")" : esc(r.device_name + " " + r.device_arch),
                   kernels, esc(r.start_time), esc(r.end_time));
  h += fmt::format("<p id=\"summary\"><span class=\"badge b-pass\">{} passed</span><span class=\"badge b-fail\">{} failed</span>"
                   "<span class=\"badge b-skip\">{} skipped</span><span class=\"badge b-error\">{} errors</span> of {}</p>\n",
                   pass, fail, skip, err, r.cases.size());

  if (opt.baseline && opt.drift) {
    h += fmt::format("<h2 id=\"drift\">Drift against {} ({} finding(s))</h2>\n", esc(opt.baseline->file), opt.drift->size());
    h += fmt::format("<p>baseline: harness {}, device {}</p>\n", esc(opt.baseline->harness_commit),
                     opt.baseline->device_arch.empty() ? std::string("none")
                                                       : esc(opt.baseline->device_name + " " + opt.baseline->device_arch));
    if (opt.drift->empty()) h += "<p>No drift beyond the margins.</p>\n";
    else {
      h += "<table><tr><th>kind</th><th>kernel</th><th>case</th><th>detail</th></tr>\n";
      for (const auto& f : *opt.drift)
        h += fmt::format("<tr><td class=\"{}\">{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>\n",
                         f.kind == "new" ? "skip" : "fail", esc(f.kind), esc(f.kernel), esc(f.id), esc(f.detail));
      h += "</table>\n";
    }
  }

  h += "<h2>Cases</h2>\n<table><tr><th>status</th><th>kernel</th><th>case</th><th>min cos</th><th>max rel</th>"
       "<th>variant</th><th>reason</th></tr>\n";
  for (const auto& c : r.cases) {
    const bool ran = !c.token_cos.empty();
    const double mc = metric(c, "min_cos"), mr = metric(c, "max_rel");
    h += fmt::format("<tr><td class=\"{}\">{}</td><td class=\"k\">{}</td><td>{}<code>{}</code>{}</td><td class=\"num\">{}</td>"
                     "<td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>\n",
                     esc(c.status), esc(c.status), esc(c.kernel), ran ? "<a href=\"#" + anchor(c) + "\">" : "", esc(c.id),
                     ran ? "</a>" : "", std::isnan(mc) ? "" : fmt::format("{:.7f}", mc),
                     std::isnan(mr) ? "" : fmt::format("{:.2e}", mr), esc(c.variant), esc(c.reason));
  }
  h += "</table>\n";

  h += "<h2>Per token</h2>\n<p>Each plot shows every token (log scale, lower is better); the dashed line is the "
       "case's threshold. Failing cases first.</p>\n";
  std::vector<const ReportCase*> shown;
  for (const auto& c : r.cases)
    if (!c.token_cos.empty()) shown.push_back(&c);
  std::stable_sort(shown.begin(), shown.end(), [](const ReportCase* a, const ReportCase* b) {
    return (a->status == "pass") < (b->status == "pass");
  });
  for (const ReportCase* c : shown) {
    h += fmt::format("<details open id=\"{}\"><summary><span class=\"{}\">{}</span> <h3><code>{}</code></h3> {}</summary>\n",
                     anchor(*c), esc(c->status), esc(c->status), esc(c->id), esc(c->kernel));
    if (!c->reason.empty()) h += fmt::format("<p class=\"{}\">{}</p>\n", esc(c->status), esc(c->reason));
    std::vector<double> deficit(c->token_cos.size());
    for (std::size_t i = 0; i < deficit.size(); ++i) deficit[i] = 1.0 - c->token_cos[i];
    h += "<div class=\"plots\">";
    h += plot(deficit, 1.0 - metric(*c, "threshold_min_cos"), "1 &#8722; cos per token", "cos", 1e-10, opt.max_points);
    h += plot(c->token_rel, metric(*c, "threshold_max_rel"), "relative error per token", "rel", 1e-8, opt.max_points);
    h += "</div>\n";
    std::vector<std::size_t> order(c->token_rel.size());
    std::iota(order.begin(), order.end(), 0);
    auto badness = [&](std::size_t i) { return std::isfinite(c->token_rel[i]) ? c->token_rel[i] : INFINITY; };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return badness(a) > badness(b); });
    h += "<table><tr><th>worst tokens</th><th>cos</th><th>rel</th></tr>";
    for (std::size_t i = 0; i < std::min<std::size_t>(5, order.size()); ++i)
      h += fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{:.7f}</td><td class=\"num\">{:.3e}</td></tr>", order[i],
                       c->token_cos[order[i]], c->token_rel[order[i]]);
    h += "</table>\n";
    if (!c->details.empty()) h += "<pre>" + esc(c->details) + "</pre>\n";
    h += "</details>\n";
  }
  h += kScript;
  h += "\n</body></html>\n";
  return h;
}

}  // namespace moe
