#include "reports/run_report.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/record_json.hpp"

#include "fixtures/atomic_file.hpp"

namespace moe {

using nlohmann::ordered_json;

int RunReport::count(const std::string& status) const {
  int n = 0;
  for (const auto& c : cases) n += c.status == status;
  return n;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ordered_json provenance_to_json(const Provenance& p) {
  ordered_json kernels = ordered_json::array();
  for (auto& [id, v] : p.kernels) kernels.push_back({{"id", id}, {"version", v}});
  return {{"harness_version", p.harness_version}, {"harness_commit", p.harness_commit}, {"kernels", kernels},
          {"device", {{"name", p.device_name}, {"vendor", p.device_vendor}, {"arch", p.device_arch},
                      {"compute_units", p.compute_units}, {"driver_version", p.driver_version},
                      {"runtime_version", p.runtime_version}, {"message", p.device_message}}},
          {"suite", p.suite}, {"suite_file", p.suite_file}, {"suite_hash", fmt::format("{:016x}", p.suite_hash)},
          {"seed", p.seed}, {"start_time", p.start_time}, {"end_time", p.end_time}, {"host", p.host},
          {"incomplete", p.incomplete}, {"incomplete_reason", p.incomplete_reason}};
}

ordered_json case_record_to_json(const CaseRecord& c) {
  ordered_json m = ordered_json::object();
  for (auto& [k, v] : c.metrics) m[k] = v;
  return {{"id", c.id}, {"kernel", c.kernel}, {"status", c.status}, {"reason", c.reason},
          {"failed_check", c.failed_check}, {"source", c.source}, {"variant", c.variant},
          {"metrics", m}, {"token_cos", c.token_cos}, {"token_rel", c.token_rel},
          {"timing", {{"kernel_us", c.kernel_us}, {"reference_s", c.reference_s}}},
          {"fixture_fingerprint", fmt::format("{:016x}", c.fixture_fingerprint)}, {"details", c.details}};
}

std::string to_json_text(const RunReport& r) {
  ordered_json j;
  j["schema_version"] = kRunReportSchemaVersion;
  j["provenance"] = provenance_to_json(r.provenance);
  j["summary"] = {{"total", r.cases.size()}, {"pass", r.count("pass")}, {"fail", r.count("fail")},
                  {"skip", r.count("skip")}, {"error", r.count("error")}};
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
  s += fmt::format("- **{} passed, {} failed, {} skipped, {} errors** of {}\n\n", r.count("pass"), r.count("fail"),
                   r.count("skip"), r.count("error"), r.cases.size());
  s += "| status | kernel | case | min cos | max rel | variant | note |\n|---|---|---|---|---|---|---|\n";
  for (const CaseRecord& c : r.cases) {
    auto metric = [&](const char* k, const char* f) {
      auto it = c.metrics.find(k);
      return it == c.metrics.end() ? std::string("") : fmt::format(fmt::runtime(f), it->second);
    };
    std::string note = c.reason;
    for (auto& ch : note) if (ch == '|' || ch == '\n') ch = ' ';
    s += fmt::format("| {} | {} | `{}` | {} | {} | {} | {} |\n", c.status, c.kernel, c.id, metric("min_cos", "{:.6f}"),
                     metric("max_rel", "{:.2e}"), c.variant, note);
  }
  return s;
}

void write_reports(const RunReport& r, const std::filesystem::path& json_path, const std::filesystem::path& md_path) {
  if (!json_path.empty()) write_file_atomically(json_path, to_json_text(r));
  if (!md_path.empty()) write_file_atomically(md_path, to_markdown(r));
}

}  // namespace moe
