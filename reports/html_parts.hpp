// The pieces of the HTML report (internal to reports/): escaping and number cells, the log-scale SVG plot, the case
// tables and the per-token sections of failing cases. Everything streams into an std::ostream.
#pragma once
#include <fmt/format.h>

#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "reports/report_reader.hpp"

namespace moe::html {

template <typename... A>
void put(std::ostream& o, fmt::format_string<A...> f, A&&... a) {
  fmt::format_to(std::ostreambuf_iterator<char>(o), f, std::forward<A>(a)...);
}

std::string esc(std::string_view s);  // & < > " escaped for text and attribute values
std::string anchor(const ReportCase& c);  // the id of the case's per-token section
std::optional<double> metric(const ReportCase& c, const char* key);
// A table cell right-aligned; NaN and Inf spelled out in the failure colour; empty when absent.
std::string num_cell(std::optional<double> v, const char* spec);
// Fail, error, or a status this build does not know: anything a release must not take for a pass.
bool failing(const std::string& status);
// One row of seconds per phase (kTimingPhases) and their total.
void timing_table(std::ostream& o, const CaseTiming& t, const char* id, const char* caption);

// One series of a plot: values where higher is worse. NaN and Inf are failures: drawn at the top of the plot with a
// marker of their own and counted.
struct Series {
  std::vector<double> values;
  const char* cls;  // "cos" or "rel": the colour
};
struct PlotSpec {
  std::string title;  // HTML
  const char* cls;    // the svg's class after "plot"
  double lo, hi;      // log axis range
  double threshold;   // dashed line where finite and > 0
  std::size_t max_points;  // above this, items are binned keeping each bin's worst
  const char* item;   // "token" or "case": what the x axis counts
};
void write_plot(std::ostream& o, const PlotSpec& p, const std::vector<Series>& series);

// Failing cases (errors first), identical skips grouped by reason, passing cases collapsed behind one summary plot.
// `detailed`: the cases with a per-token section, linked from the tables.
void write_case_tables(std::ostream& o, const ReadReport& r, const std::vector<const ReportCase*>& detailed);
// The per-token section of one failing case: both plots, the worst tokens, the diagnostics.
void write_case_detail(std::ostream& o, const ReportCase& c, std::size_t max_points);

}  // namespace moe::html
