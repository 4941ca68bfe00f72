// One self-contained HTML file for a run (no network, no external assets): the summary, drift against a baseline
// when one is given (new failures first), the failing cases (errors first), identical skips grouped by reason, the
// passing cases collapsed behind one plot of how much of their thresholds they used, and for each failing case its
// per-token 1 - cos and relative error (inline SVG, thresholds drawn, NaN tokens marked at the top), worst tokens
// and diagnostics. Passing cases get no per-case plot: a 10,000-case report stays a few MB. A small inline script
// only counts the plots the browser laid out and when (<body data-plots-drawn data-render-ms>), which the
// headless-Chromium tests read; the page needs no script to be read.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "reports/drift.hpp"
#include "reports/report_reader.hpp"

namespace moe {

struct HtmlOptions {
  const ReadReport* baseline = nullptr;  // drift section when set
  const std::vector<DriftFinding>* drift = nullptr;
  std::size_t max_points = 512;       // per plot: above this, tokens are binned keeping each bin's worst
  std::size_t point_budget = 600000;  // all per-token plots together: fewer points each when many cases fail
  std::size_t detail_limit = 1000;    // failing cases with a per-token section; the others are table rows only
};

void write_html(std::ostream& out, const ReadReport& r, const HtmlOptions& opt = {});
std::string to_html(const ReadReport& r, const HtmlOptions& opt = {});

}  // namespace moe
