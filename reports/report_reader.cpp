#include "reports/report_reader.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "fixtures/error.hpp"
#include "reports/run_report.hpp"

namespace moe {

const ReportCase* ReadReport::find(const std::string& id, const std::string& kernel) const {
  for (const auto& c : cases)
    if (c.id == id && c.kernel == kernel) return &c;
  return nullptr;
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
    // Non-const references: a missing key then reads as null and its get<> throws; nlohmann's const operator[]
    // on a missing key is undefined behaviour (an assertion, or a read past the map's end).
    for (auto& k : j["provenance"]["kernels"])
      r.kernels.push_back(k["id"].get<std::string>() + " " + k["version"].get<std::string>());
    for (auto& c : j["cases"]) {
      ReportCase rc;
      rc.id = c["id"]; rc.kernel = c["kernel"]; rc.status = c["status"]; rc.reason = c["reason"];
      rc.variant = c["variant"]; rc.failed_check = c["failed_check"]; rc.details = c["details"];
      for (auto it = c["metrics"].begin(); it != c["metrics"].end(); ++it) rc.metrics[it.key()] = it.value().get<double>();
      rc.token_cos = c["token_cos"].get<std::vector<double>>();
      rc.token_rel = c["token_rel"].get<std::vector<double>>();
      r.cases.push_back(std::move(rc));
    }
  } catch (const nlohmann::json::exception& e) {
    throw_bad_input(f, "cases", std::string("report does not follow the schema: ") + e.what(),
                    "validate it against reports/schema/run_report.schema.json");
  }
  return r;
}

}  // namespace moe
