// The report's one kind of plot: items (tokens, or cases) along x, a log-scale "higher is worse" value up y, the
// threshold dashed. A non-finite value is a failure: its bin sits at the top of the plot, gets a red marker above
// it, and is counted by item; it is never dropped and never drawn on the floor where a perfect value sits.
#include <algorithm>
#include <cmath>

#include "reports/html_parts.hpp"

namespace moe::html {
namespace {
constexpr int kW = 560, kH = 150, kL = 52, kR = 8, kT = 20, kB = 24;
}

void write_plot(std::ostream& o, const PlotSpec& p, const std::vector<Series>& series) {
  const double llo = std::log10(p.lo), lhi = std::log10(p.hi);
  auto y_of = [&](double v) { return kT + (lhi - std::log10(std::clamp(v, p.lo, p.hi))) / (lhi - llo) * (kH - kT - kB); };
  const std::size_t n = series.empty() ? 0 : series.front().values.size();
  const std::size_t bins = std::min(n, std::max<std::size_t>(p.max_points, 1));
  auto x_of = [&](std::size_t b) { return kL + (bins <= 1 ? 0.5 : double(b) / double(bins - 1)) * (kW - kL - kR); };
  const char* plural = n == 1 ? "" : "s";
  put(o, R"(<svg class="plot {}" width="{}" height="{}" viewBox="0 0 {} {}" role="img">)", p.cls, kW, kH, kW, kH);
  put(o, R"(<text x="{}" y="13" class="t">{} ({})</text>)", kL, p.title,
      bins < n ? fmt::format("{} {}s in {} bins, each bin's worst", n, p.item, bins) : fmt::format("{} {}{}", n, p.item, plural));
  for (double d = llo; d <= lhi + 1e-9; d += 2) {
    const double y = y_of(std::pow(10.0, d));
    put(o, R"(<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" class="grid"/><text x="{}" y="{:.1f}" class="ax">1e{}</text>)",
        kL, kW - kR, y, y, kL - 4, y + 4, int(std::lround(d)));
  }
  put(o, R"(<line x1="{}" x2="{}" y1="{}" y2="{}" class="axis"/>)", kL, kW - kR, kH - kB, kH - kB);
  put(o, R"(<text x="{}" y="{}" class="ax" text-anchor="start">{} 0</text><text x="{}" y="{}" class="ax">{}</text>)",
      kL, kH - 8, p.item, kW - kR, kH - 8, n ? n - 1 : 0);
  if (std::isfinite(p.threshold) && p.threshold > 0) {
    const double y = y_of(p.threshold);
    put(o, R"(<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" class="thr"><title>threshold {:.3g}</title></line>)", kL,
        kW - kR, y, y, p.threshold);
  }
  for (std::size_t s = 0; s < series.size(); ++s) {
    const std::vector<double>& v = series[s].values;
    std::string pts, marks;
    std::size_t bad = 0;
    double x = 0, y = 0;
    for (std::size_t b = 0; b < bins; ++b) {
      const std::size_t a = b * n / bins, e = std::max(a + 1, (b + 1) * n / bins);
      double worst = -INFINITY;
      bool non_finite = false;
      for (std::size_t i = a; i < e; ++i) {
        if (std::isfinite(v[i])) {
          worst = std::max(worst, v[i]);
        } else {
          non_finite = true;
          ++bad;
        }
      }
      x = x_of(b);
      y = non_finite ? kT : y_of(worst);
      fmt::format_to(std::back_inserter(pts), "{:.1f},{:.1f} ", x, y);
      if (non_finite) fmt::format_to(std::back_inserter(marks), "M{:.1f},{}l4,4l-4,4l-4,-4z", x, kT - 4);
    }
    const char* cls = series[s].cls;
    if (bins == 1) put(o, R"(<circle class="data {}" cx="{:.1f}" cy="{:.1f}" r="3.5"/>)", cls, x, y);
    else if (bins > 1) put(o, R"(<polyline class="data {}" points="{}"/>)", cls, pts);
    if (bad) {
      const char* item_plural = bad == 1 ? "" : "s";
      put(o, R"(<path class="nan" d="{}"><title>{} non-finite {}{}</title></path>)", marks, bad, p.item, item_plural);
      put(o, R"(<text x="{}" y="{}" class="bad">{} non-finite {}{}</text>)", kW - kR, kT + 12 + 12 * int(s), bad, p.item,
          item_plural);
    }
  }
  o << "</svg>";
}

}  // namespace moe::html
