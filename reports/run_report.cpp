#include "reports/run_report.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fixtures/atomic_file.hpp"
#include "reports/record_json.hpp"

namespace moe {

using nlohmann::ordered_json;

int RunReport::count(Status status) const {
  int n = 0;
  for (const auto& c : cases) n += c.status == status;
  return n;
}

bool any_bad_input(const RunReport& r) {
  for (const CaseRecord& c : r.cases)
    if (c.failed_check == Check::bad_input) return true;
  return false;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {
// Where the run's time went: each phase summed over the cases, with its share of the sum.
std::string timing_markdown(const CaseTiming& total, std::size_t cases) {
  double sum = 0;
  for (auto [name, field] : kTimingPhases) sum += total.*field;
  std::string head = "|", rule = "|", row = "|";
  for (auto [name, field] : kTimingPhases) {
    head += fmt::format(" {} |", name);
    rule += "---|";
    row += fmt::format(" {:.2f} ({:.0f}%) |", total.*field, sum > 0 ? 100 * total.*field / sum : 0.0);
  }
  return fmt::format("\nTime by phase (seconds of wall time summed over the {} case(s), {:.2f} s in all):\n\n"
                     "{} total |\n{}---|\n{} {:.2f} |\n", cases, sum, head, rule, row, sum);
}

}  // namespace

std::string to_json_text(const RunReport& r) {
  ordered_json j;
  j["schema_version"] = kRunReportSchemaVersion;
  j["provenance"] = provenance_to_json(r.provenance);
  j["summary"] = {{"total", r.cases.size()}, {"pass", r.count(Status::pass)}, {"fail", r.count(Status::fail)},
                  {"skip", r.count(Status::skip)}, {"error", r.count(Status::error)}};
  ordered_json cases = ordered_json::array();
  for (const CaseRecord& c : r.cases) cases.push_back(case_record_to_json(c));
  j["cases"] = cases;
  return j.dump(1) + "\n";
}

std::string to_markdown(const RunReport& r) {
  const Provenance& p = r.provenance;
  std::string s = fmt::format("# moe-harness run: suite `{}`\n\n", p.suite);
  s += fmt::format("- harness {} ({}), device: {}\n", p.harness_version, p.harness_commit,
                   p.device_arch.empty() ? "none (" + p.device_message + ")" : p.device_name + " " + p.device_arch + " " + std::to_string(p.compute_units) + " CU");
  s += fmt::format("- {} to {}, suite file {} ({:016x})\n", p.start_time, p.end_time, p.suite_file, p.suite_hash);
  if (p.incomplete) s += fmt::format("- **INCOMPLETE**: {}\n", p.incomplete_reason);
  s += fmt::format("- **{} passed, {} failed, {} skipped, {} errors** of {}\n\n", r.count(Status::pass), r.count(Status::fail),
                   r.count(Status::skip), r.count(Status::error), r.cases.size());
  s += "| status | kernel | case | min cos | max rel | variant | note |\n|---|---|---|---|---|---|---|\n";
  for (const CaseRecord& c : r.cases) {
    auto metric = [&](const char* k, const char* f) {
      auto it = c.metrics.find(k);
      if (it == c.metrics.end()) return std::string("");
      return std::isnan(it->second) ? std::string("NaN") : fmt::format(fmt::runtime(f), it->second);
    };
    std::string note = c.reason;
    for (auto& ch : note) if (ch == '|' || ch == '\n') ch = ' ';
    s += fmt::format("| {} | {} | `{}` | {} | {} | {} | {} |\n", name(c.status), c.kernel, c.id, metric("min_cos", "{:.6f}"),
                     metric("max_rel", "{:.2e}"), c.variant, note);
  }
  bool any_nan = false;
  for (const CaseRecord& c : r.cases)
    for (const char* k : {"min_cos", "max_rel"})
      if (auto it = c.metrics.find(k); it != c.metrics.end() && std::isnan(it->second)) any_nan = true;
  if (any_nan)
    s += "\nNaN: a token with unwritten or non-finite elements has no cos or rel (null in report.json); it is the "
         "case's worst token.\n";
  // The rounding contracts the judged cases were judged against, where any is not today's default.
  std::map<std::pair<std::string, std::string>, std::vector<const CaseRecord*>> contracts;
  for (const CaseRecord& c : r.cases)
    if (!c.contract.effective.empty()) contracts[{c.contract.effective, c.contract.source}].push_back(&c);
  if (!contracts.empty() && !(contracts.size() == 1 && contracts.begin()->first.first == "default")) {
    s += "\nRounding contracts judged against (by contract and source):\n\n";
    for (const auto& [key, recs] : contracts)
      s += fmt::format("- `{}` from {} ({} case(s), e.g. `{}` on {})\n", key.first, key.second, recs.size(),
                       recs.front()->id, recs.front()->kernel);
  }
  // Checks that did not run, grouped by check and reason: never to be read as checks that found nothing.
  std::map<std::pair<std::string, std::string>, std::vector<const CaseRecord*>> not_run;
  for (const CaseRecord& c : r.cases)
    for (const auto& [probe, st] : c.probes)
      if (st != "ran") not_run[{probe, st}].push_back(&c);
  for (const CaseRecord& c : r.cases)
    for (const StatisticRecord& st : c.systematic)
      if (!st.ran()) not_run[{st.name, st.status}].push_back(&c);
  if (!not_run.empty()) {
    s += "\nChecks not run (by check and reason):\n\n";
    for (const auto& [key, recs] : not_run)
      s += fmt::format("- `{}` {} ({} case(s), e.g. `{}` on {})\n", key.first, key.second, recs.size(),
                       recs.front()->id, recs.front()->kernel);
  }
  s += timing_markdown(timing_total(r.cases), r.cases.size());
  return s;
}

void write_reports(const RunReport& r, const std::filesystem::path& json_path, const std::filesystem::path& md_path) {
  if (!json_path.empty()) write_file_atomically(json_path, to_json_text(r));
  if (!md_path.empty()) write_file_atomically(md_path, to_markdown(r));
}

}  // namespace moe
