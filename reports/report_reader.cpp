#include "reports/report_reader.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fixtures/error.hpp"
#include "reports/record_json.hpp"
#include "reports/run_report.hpp"

namespace moe {

const ReportCase* ReadReport::find(const std::string& id, const std::string& kernel) const {
  for (const auto& c : cases)
    if (c.id == id && c.kernel == kernel) return &c;
  return nullptr;
}

namespace {
// null is how a non-finite number is written (JSON has no NaN): it reads back as NaN.
double number(const nlohmann::json& v) { return v.is_null() ? std::nan("") : v.get<double>(); }
std::vector<double> numbers(const nlohmann::json& a) {
  std::vector<double> out;
  for (const auto& v : a) out.push_back(number(v));
  return out;
}
std::uint64_t hex64(const nlohmann::json& v) { return std::stoull(v.get<std::string>(), nullptr, 16); }
}  // namespace

CaseRecord case_record_from_json(const nlohmann::json& c) {
  CaseRecord r;
  r.id = c.at("id"); r.kernel = c.at("kernel"); r.status = c.at("status"); r.reason = c.at("reason");
  r.failed_check = c.at("failed_check"); r.source = c.at("source"); r.variant = c.at("variant");
  r.details = c.at("details");
  for (auto it = c.at("metrics").begin(); it != c.at("metrics").end(); ++it) r.metrics[it.key()] = number(it.value());
  r.token_cos = numbers(c.at("token_cos"));
  r.token_rel = numbers(c.at("token_rel"));
  r.kernel_us = number(c.at("timing").at("kernel_us"));
  r.reference_s = number(c.at("timing").at("reference_s"));
  r.fixture_fingerprint = hex64(c.at("fixture_fingerprint"));
  return r;
}

Provenance provenance_from_json(const nlohmann::json& j) {
  Provenance p;
  p.harness_version = j.at("harness_version"); p.harness_commit = j.at("harness_commit");
  for (const auto& k : j.at("kernels")) p.kernels.push_back({k.at("id"), k.at("version")});
  const auto& d = j.at("device");
  p.device_name = d.at("name"); p.device_vendor = d.at("vendor"); p.device_arch = d.at("arch");
  p.compute_units = d.at("compute_units"); p.driver_version = d.at("driver_version");
  p.runtime_version = d.at("runtime_version"); p.device_message = d.at("message");
  p.suite = j.at("suite"); p.suite_file = j.at("suite_file"); p.suite_hash = hex64(j.at("suite_hash"));
  p.seed = j.at("seed"); p.start_time = j.at("start_time"); p.end_time = j.at("end_time"); p.host = j.at("host");
  p.incomplete = j.value("incomplete", false);  // absent in reports written before the field existed
  p.incomplete_reason = j.value("incomplete_reason", std::string());
  return p;
}

ReadReport read_report(const std::filesystem::path& file) {
  const std::string f = file.string();
  std::ifstream in(file);
  if (!in) throw_bad_input(f, "", "cannot open the report", "pass the report.json a `moe-harness run` wrote");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw_bad_input(f, "", std::string("not valid JSON: ") + e.what(), "pass an intact report.json");
  }
  if (!j.is_object() || !j.contains("schema_version") || j["schema_version"] != kRunReportSchemaVersion)
    throw_bad_input(f, "schema_version", "not a moe-harness run report of schema version " + std::to_string(kRunReportSchemaVersion),
                    "re-run with this harness version or compare reports of the same schema");
  ReadReport r;
  r.file = f;
  try {
    r.suite = j["provenance"]["suite"].get<std::string>();
    r.device_arch = j["provenance"]["device"]["arch"].get<std::string>();
    r.device_name = j["provenance"]["device"]["name"].get<std::string>();
    r.harness_commit = j["provenance"]["harness_commit"].get<std::string>();
    r.device_message = j["provenance"]["device"]["message"].get<std::string>();
    r.start_time = j["provenance"]["start_time"].get<std::string>();
    r.end_time = j["provenance"]["end_time"].get<std::string>();
    for (const auto& k : j["provenance"]["kernels"])
      r.kernels.push_back(k["id"].get<std::string>() + " " + k["version"].get<std::string>());
    for (const auto& c : j["cases"]) {
      CaseRecord cr = case_record_from_json(c);
      ReportCase rc;
      rc.id = cr.id; rc.kernel = cr.kernel; rc.status = cr.status; rc.reason = cr.reason; rc.variant = cr.variant;
      rc.failed_check = cr.failed_check; rc.details = cr.details; rc.metrics = cr.metrics;
      rc.token_cos = cr.token_cos; rc.token_rel = cr.token_rel;
      r.cases.push_back(std::move(rc));
    }
    r.incomplete = j["provenance"].value("incomplete", false);
  } catch (const std::exception& e) {  // a missing key, a wrong type, a fingerprint that is not hex
    throw_bad_input(f, "cases", std::string("report does not follow the schema: ") + e.what(),
                    "validate it against reports/schema/run_report.schema.json");
  }
  return r;
}

}  // namespace moe
