#include "reports/report_reader.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "fixtures/error.hpp"
#include "fixtures/input_file.hpp"
#include "reports/json_fields.hpp"
#include "reports/record_json.hpp"
#include "reports/report_json.hpp"
#include "reports/run_report.hpp"

namespace moe {
namespace {

using Json = nlohmann::ordered_json;
constexpr int kMaxReportDepth = 16;

}  // namespace

namespace {
std::string case_key(const std::string& id, const std::string& kernel) { return kernel + '\0' + id; }
}  // namespace

const ReportCase* ReadReport::find(const std::string& id, const std::string& kernel) const {
  if (indexed_data_ != cases.data() || indexed_ > cases.size()) {  // the vector was replaced, moved or shrunk
    index_.clear();
    indexed_ = 0;
  }
  for (; indexed_ < cases.size(); ++indexed_)
    index_.emplace(case_key(cases[indexed_].id, cases[indexed_].kernel), indexed_);  // the first one wins
  indexed_data_ = cases.data();
  const auto it = index_.find(case_key(id, kernel));
  return it == index_.end() ? nullptr : &cases[it->second];
}

namespace {
// The deepest nesting of arrays and objects in a JSON text (brackets inside strings not counted), so that a document
// nested deeper than a report is refused before it is parsed: one pass over the bytes, where nlohmann's callback
// parser (a call per token) took a third of reading a large report.
int json_nesting_depth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character, whatever it is, is part of the string
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}
}  // namespace

Json read_report_json(const std::filesystem::path& file) {
  const std::string f = file.string();
  const std::string text = read_input_file(file, "report", kReportFileLimit);
  // A report nests five levels deep; a deeper document is not one, and is refused before it takes memory.
  if (json_nesting_depth(text) > kMaxReportDepth)
    throw_bad_input(f, "", "nested deeper than " + std::to_string(kMaxReportDepth) + " levels: not a run report",
                    "pass a report.json written by `moe-harness run`");
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw_bad_input(f, "", std::string("not valid JSON: ") + e.what(), "pass an intact report.json");
  }
  if (!j.is_object() || !j.contains("schema_version") || !j["schema_version"].is_number_integer() ||
      j["schema_version"].get<long long>() != kRunReportSchemaVersion)
    throw_bad_input(f, "schema_version", "not a moe-harness run report of schema version " + std::to_string(kRunReportSchemaVersion),
                    "re-run with this harness version or compare reports of the same schema");
  return j;
}

// The provenance and every case through the one reader of records (reports/record_json.hpp), which checks each
// field; the report's view keeps what compare, gate, merge and html use.
ReadReport parse_report(const Json& j, const std::string& f) {
  const JsonFields<Json> F(f, "pass a report.json written by `moe-harness run` (schema reports/schema/run_report.schema.json)");
  ReadReport r;
  r.file = f;
  const Provenance p = provenance_from_json(F.get(j, "", "provenance", JsonWant::object), f, "provenance");
  r.suite = p.suite;
  r.harness_commit = p.harness_commit;
  r.start_time = p.start_time;
  r.end_time = p.end_time;
  r.device_arch = p.device_arch;
  r.device_name = p.device_name;
  r.device_message = p.device_message;
  for (const auto& [id, version] : p.kernels) {
    r.kernel_ids.push_back(id);
    r.kernels.push_back(id + " " + version);
  }
  r.incomplete = p.incomplete;
  r.incomplete_reason = p.incomplete_reason;
  const Json& cases = F.get(j, "", "cases", JsonWant::array);
  r.cases.reserve(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string at = "cases[" + std::to_string(i) + "]";
    CaseRecord c = case_record_from_json(F.check(cases[i], at, JsonWant::object), f, at);
    ReportCase rc;
    rc.id = std::move(c.id);
    rc.kernel = std::move(c.kernel);
    rc.status = c.status;
    rc.reason = std::move(c.reason);
    rc.variant = std::move(c.variant);
    rc.failed_check = c.failed_check;
    rc.details = std::move(c.details);
    rc.fixture_fingerprint = fmt::format("{:016x}", c.fixture_fingerprint);
    rc.metrics = std::move(c.metrics);
    rc.token_cos = std::move(c.token_cos);
    rc.token_rel = std::move(c.token_rel);
    rc.timing = c.timing;
    rc.systematic = std::move(c.systematic);
    rc.contract = std::move(c.contract);
    r.cases.push_back(std::move(rc));
  }
  return r;
}

ReadReport read_report(const std::filesystem::path& file) { return parse_report(read_report_json(file), file.string()); }

}  // namespace moe
