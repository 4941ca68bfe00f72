// The JSON layer of the report reader, for readers that keep the whole document (merge copies every field of a
// case). Every field is checked for presence and type, once (the provenance and the cases through the one reader
// of records, reports/record_json.hpp), so a malformed report is bad input naming the file and the key (e.g.
// "cases[3].metrics.min_cos"), never a crash.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "reports/report_reader.hpp"

namespace moe {

// report.json as JSON: a regular file within kReportFileLimit (fixtures/input_limits.hpp), valid JSON, an
// object of schema_version kRunReportSchemaVersion.
nlohmann::ordered_json read_report_json(const std::filesystem::path& file);

// The fields of a parsed report, each checked; `null` numbers (non-finite values) are read as NaN.
ReadReport parse_report(const nlohmann::ordered_json& j, const std::string& file);

}  // namespace moe
