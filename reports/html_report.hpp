// One self-contained HTML file for a run (no network, no external assets): the summary, per-case plots of every
// token's 1 - cos and relative error (inline SVG, thresholds drawn), the worst tokens, the diagnostics, and drift
// against a baseline when one is given. A small inline script only counts the plots the browser laid out
// (<body data-plots-drawn>), which the headless-Chromium test reads; the page needs no script to be read.
#pragma once
#include <string>
#include <vector>

#include "reports/drift.hpp"
#include "reports/report_reader.hpp"

namespace moe {

struct HtmlOptions {
  const ReadReport* baseline = nullptr;         // drift section when set
  const std::vector<DriftFinding>* drift = nullptr;
  std::size_t max_points = 512;                 // per plot: above this, tokens are binned keeping each bin's worst
};

std::string to_html(const ReadReport& r, const HtmlOptions& opt = {});

}  // namespace moe
