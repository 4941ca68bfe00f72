// The HTML report from reports built here: NaN tokens and metrics drawn and listed as failing (never dropped, never
// as cos 1), the case tables' order and grouping, passing cases summarised without per-case plots.
#include "reports/html_report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

namespace moe {
namespace {

ReportCase ran(const std::string& id, Status status, std::size_t tokens) {
  ReportCase c;
  c.id = id;
  c.kernel = "host-contract";
  c.status = status;
  c.variant = "host/atomic";
  c.metrics = {{"min_cos", 0.99999}, {"max_rel", 3e-3}, {"threshold_min_cos", 0.9999}, {"threshold_max_rel", 0.012}};
  c.token_cos.assign(tokens, 0.99999);
  c.token_rel.assign(tokens, 3e-3);
  return c;
}

ReportCase skipped(const std::string& id, const std::string& reason) {
  ReportCase c;
  c.id = id;
  c.kernel = "host-contract";
  c.status = Status::skip;
  c.reason = reason;
  return c;
}

ReadReport report(std::vector<ReportCase> cases) {
  ReadReport r;
  r.file = "r.json";
  r.suite = "unit";
  r.cases = std::move(cases);
  return r;
}

// The per-token section of one case: from its <details id="case-..."> to the closing tag.
std::string section(const std::string& html, const std::string& id_part) {
  const auto at = html.find("<details open id=\"case-host-contract-" + id_part);
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</details>", at) - at);
}

int count(const std::string& s, const std::string& needle) {
  int n = 0;
  for (auto p = s.find(needle); p != std::string::npos; p = s.find(needle, p + needle.size())) ++n;
  return n;
}

// A token whose output had non-finite or unwritten elements reads back as cos = rel = NaN. It is drawn at the top
// of both plots with the failure marker, counted by tokens, and listed first among the worst tokens.
TEST(HtmlReport, NanTokensAreDrawnAndListedAsFailing) {
  ReportCase c = ran("nan", Status::fail, 8);
  c.failed_check = Check::non_finite;
  c.reason = "non_finite: 2 element(s) NaN/Inf";
  c.token_cos[3] = NAN;
  c.token_rel[3] = NAN;
  c.token_cos[6] = NAN;  // cos NaN, rel finite (and small): still the worst token
  c.token_rel[6] = 1e-4;
  c.token_rel[1] = 0.5;  // the worst finite token
  c.metrics["min_cos"] = NAN;
  c.metrics["max_rel"] = NAN;
  const std::string h = to_html(report({c}));
  const std::string s = section(h, "nan");
  ASSERT_FALSE(s.empty()) << h.substr(0, 2000);
  // One failure marker per NaN token in its plot: 2 in the cos plot (tokens 3 and 6), 1 in the rel plot (token 3).
  const auto cos_plot = s.substr(s.find("svg class=\"plot cos"), s.find("svg class=\"plot rel") - s.find("svg class=\"plot cos"));
  const auto rel_plot = s.substr(s.find("svg class=\"plot rel"));
  EXPECT_EQ(count(cos_plot, "class=\"nan\""), 1) << cos_plot;  // one marker path ...
  EXPECT_NE(cos_plot.find("2 non-finite tokens"), std::string::npos) << cos_plot;  // ... for two tokens
  EXPECT_NE(rel_plot.find("1 non-finite token"), std::string::npos) << rel_plot;
  // The markers sit over tokens 3 and 6 (x of token t: 52 + t / 7 * 500) at the top of the plot area.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(cos_plot, m, std::regex("class=\"nan\" d=\"([^\"]*)\""))) << cos_plot;
  EXPECT_NE(m[1].str().find("M266.3,"), std::string::npos) << m[1];  // token 3: 52 + 3/7*500 = 266.29
  EXPECT_NE(m[1].str().find("M480.6,"), std::string::npos) << m[1];  // token 6: 52 + 6/7*500 = 480.57
  // Worst tokens: the NaN tokens first (3, then 6), then token 1; NaN printed as NaN, in the failure colour.
  const auto worst = s.substr(s.find("worst tokens"));
  const std::regex row("<tr><td class=\"num\">(\\d+)</td>");
  std::vector<std::string> order;
  for (auto it = std::sregex_iterator(worst.begin(), worst.end(), row); it != std::sregex_iterator(); ++it)
    order.push_back((*it)[1]);
  ASSERT_GE(order.size(), 3u);
  EXPECT_EQ(order[0], "3");
  EXPECT_EQ(order[1], "6");
  EXPECT_EQ(order[2], "1");
  EXPECT_NE(worst.find("<td class=\"num fail\">NaN</td>"), std::string::npos) << worst.substr(0, 600);
  // The case table shows the NaN metrics as NaN, never as a blank cell.
  const auto table = h.substr(h.find("id=\"failing\""));
  EXPECT_GE(count(table.substr(0, table.find("</table>")), "<td class=\"num fail\">NaN</td>"), 2) << table.substr(0, 1500);
}

// A NaN-cos token never becomes "1 - cos = 0" (the plot's floor, where a perfect token sits).
TEST(HtmlReport, NanCosIsNeverDrawnOnTheFloor) {
  ReportCase c = ran("one", Status::fail, 1);
  c.token_cos[0] = NAN;
  c.token_rel[0] = NAN;
  const std::string s = section(to_html(report({c})), "one");
  ASSERT_FALSE(s.empty());
  // A single token is a circle; the plot area's top is y = 20, its floor y = 126.
  EXPECT_NE(s.find("cy=\"20.0\""), std::string::npos) << s;
  EXPECT_EQ(s.find("cy=\"126.0\""), std::string::npos) << s;
}

TEST(HtmlReport, FailingFirstPassingCollapsedIdenticalSkipsGrouped) {
  std::vector<ReportCase> cases;
  for (int i = 0; i < 6; ++i) cases.push_back(ran("p" + std::to_string(i), Status::pass, 4));
  cases.push_back(skipped("s0", "no GPU here"));
  cases.push_back(ran("f0", Status::fail, 4));
  cases.push_back(skipped("s1", "no GPU here"));
  cases.push_back(skipped("s2", "targets: arch gfx950 required"));
  ReportCase e;
  e.id = "e0"; e.kernel = "host-contract"; e.status = Status::error; e.reason = "harness error: GPU fault";
  cases.push_back(e);
  const std::string h = to_html(report(cases));
  // Failing table: the error and the failure, nothing else; before the skips, which come before the passes.
  const auto fail_at = h.find("id=\"failing\""), skip_at = h.find("id=\"skipped\""), pass_at = h.find("id=\"passing\"");
  ASSERT_NE(fail_at, std::string::npos);
  ASSERT_NE(skip_at, std::string::npos);
  ASSERT_NE(pass_at, std::string::npos);
  EXPECT_LT(fail_at, skip_at);
  EXPECT_LT(skip_at, pass_at);
  const std::string failing = h.substr(fail_at, skip_at - fail_at);
  EXPECT_EQ(count(failing, "<tr class=\"case\""), 2) << failing;
  EXPECT_NE(failing.find("<code>e0</code>"), std::string::npos);
  EXPECT_NE(failing.find("<code>f0</code>"), std::string::npos);
  // Skips: one row per distinct reason, with its count, the larger group first.
  const std::string skips = h.substr(skip_at, pass_at - skip_at);
  EXPECT_EQ(count(skips, "<tr class=\"skip-group\""), 2) << skips;
  EXPECT_LT(skips.find("data-count=\"2\""), skips.find("data-count=\"1\"")) << skips;
  // Passing cases: a closed <details> holding one row each, and no per-token section of their own.
  EXPECT_EQ(h.compare(h.rfind('<', pass_at), 9, "<details "), 0) << h.substr(pass_at - 40, 120);
  const std::string passing_open = h.substr(h.rfind('<', pass_at), h.find('>', pass_at) - h.rfind('<', pass_at));
  EXPECT_EQ(passing_open.find(" open"), std::string::npos) << passing_open;
  EXPECT_EQ(count(h.substr(pass_at), "<tr class=\"case\""), 6);
  EXPECT_FALSE(section(h, "f0").empty());
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(section(h, "p" + std::to_string(i)).empty()) << i;
}

// A failing case gets a table of its systematic statistics beside their limits (a statistic that did not run says
// why); the passing summary names, for each statistic, the passing case closest to failing it.
TEST(HtmlReport, SystematicStatisticsTablesForFailingAndPassingCases) {
  ReportCase bad = ran("gainy", Status::fail, 4);
  bad.failed_check = Check::gain;
  bad.systematic = {{"gain", "ran", 812.5, 6, 0.03, 1e-3, "", true},
                    {"expert", "not run: one token: no other tokens to compare", NAN, 6, NAN, 2e-3, "", false}};
  ReportCase near = ran("near", Status::pass, 4), far = ran("far", Status::pass, 4);
  near.systematic = {{"gain", "ran", 5.0, 6, 9e-4, 1e-3, "", false}};  // shares: z 83 %, effect 90 %: 83 %
  far.systematic = {{"gain", "ran", 1.0, 6, 2e-3, 1e-3, "", false}};   // z 17 %
  const std::string h = to_html(report({bad, near, far}));
  const std::string s = section(h, "gainy");
  ASSERT_FALSE(s.empty());
  EXPECT_NE(s.find("<table class=\"systematic\">"), std::string::npos) << s;
  EXPECT_NE(s.find("<td>gain</td><td class=\"num\">812.5</td><td class=\"num\">6</td>"), std::string::npos) << s;
  EXPECT_NE(s.find("<td class=\"fail\">FAIL</td>"), std::string::npos);
  EXPECT_NE(s.find("not run: one token: no other tokens to compare"), std::string::npos);
  const auto m = h.find("<table id=\"systematic-margins\">");
  ASSERT_NE(m, std::string::npos);
  const std::string margins = h.substr(m, h.find("</table>", m) - m);
  EXPECT_NE(margins.find("<code>near</code>"), std::string::npos) << margins;
  EXPECT_EQ(margins.find("<code>far</code>"), std::string::npos) << margins;
  EXPECT_NE(margins.find("83.3%"), std::string::npos) << margins;
  EXPECT_NE(margins.find("<td class=\"num\">2 / 0</td>"), std::string::npos) << margins;  // ran on 2 passing cases
}

}  // namespace
}  // namespace moe

namespace moe {
namespace {

// An interrupted run's page says so before its counts, with the reason, so "No failing case" over the 2 judged
// cases cannot pass for a verdict on the whole selection; a complete run's page has no banner.
TEST(HtmlReport, IncompleteRunHasABannerBeforeTheCounts) {
  ReadReport r = report({ran("a", Status::pass, 4), ran("b", Status::pass, 4)});
  r.incomplete = true;
  r.incomplete_reason = "interrupted by SIGINT: 2 of the 120 selected test(s) judged";
  const std::string h = to_html(r);
  const auto banner = h.find("<p id=\"incomplete\" class=\"banner\">INCOMPLETE RUN: interrupted by SIGINT: 2 of the 120");
  ASSERT_NE(banner, std::string::npos) << h.substr(0, 3000);
  EXPECT_LT(banner, h.find("id=\"summary\""));
  EXPECT_NE(h.find("of the 2 case(s) judged before it stopped"), std::string::npos);
  r.incomplete = false;
  EXPECT_EQ(to_html(r).find("INCOMPLETE"), std::string::npos);
}

// The worst-token table names each listed token's experts and routing weights, as the verdict's details give them.
TEST(HtmlReport, WorstTokensShowTheirExpertsAndWeights) {
  ReportCase c = ran("bad", Status::fail, 4);
  c.token_rel = {1e-3, 0.41, 2e-3, 3e-3};  // token 1 is the worst
  c.details = "  worst tokens (token: cos, rel, experts, weights):\n"
              "    1: cos 0.910000, rel 4.100e-01, experts [3, 5], weights [0.7000, 0.3000]\n";
  const std::string s = section(to_html(report({c})), "bad");
  EXPECT_NE(s.find("<th>experts</th><th>weights</th>"), std::string::npos) << s;
  EXPECT_NE(s.find("<tr><td class=\"num\">1</td><td class=\"num\">0.9999900</td><td class=\"num\">4.100e-01</td>"
                   "<td>3, 5</td><td>0.7000, 0.3000</td></tr>"), std::string::npos) << s;
  // A token the details do not list has empty cells, never another token's experts.
  EXPECT_NE(s.find("<td class=\"num\">3.000e-03</td><td></td><td></td></tr>"), std::string::npos) << s;
}

// The failures come before the run's time by phase.
TEST(HtmlReport, FailingCasesComeBeforeTheTimingTable) {
  const std::string h = to_html(report({ran("ok", Status::pass, 4), ran("bad", Status::fail, 4)}));
  const auto failing = h.find("<table id=\"failing\">"), timing = h.find("<table id=\"timing\"");
  ASSERT_NE(failing, std::string::npos);
  ASSERT_NE(timing, std::string::npos);
  EXPECT_LT(failing, timing);
  EXPECT_LT(h.find("<details open id=\"case-host-contract-bad"), timing);
}

}  // namespace
}  // namespace moe
