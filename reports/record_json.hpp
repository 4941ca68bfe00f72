// The per-case record and the provenance in their report.json form: one writer and one reader for every file that
// carries them: report.json (reports/run_report.cpp, reports/report_reader.cpp), the run journal (journal.jsonl)
// and the records a worker process sends back to the supervisor (harness/isolation/). Non-finite numbers are
// written as null and read back as NaN; every other number reads back bit for bit, and `probes` and `systematic`
// (the verdict's order) keep their order when the document is parsed as nlohmann::ordered_json.
//
// The readers check every field (reports/json_fields.hpp): a missing field or one of the wrong type is bad input
// (exit 2) naming `file` and the field's full key, `path` + "." + key (e.g. "cases[3].metrics.min_cos"). The fields
// schema version 1 gained after it was first written are optional: a case's `probes` and `systematic`, the
// provenance's `incomplete` and `incomplete_reason`.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "reports/run_report.hpp"

namespace moe {

nlohmann::ordered_json case_record_to_json(const CaseRecord& c);
nlohmann::ordered_json provenance_to_json(const Provenance& p);

CaseRecord case_record_from_json(const nlohmann::ordered_json& j, const std::string& file = "record",
                                 const std::string& path = "");
CaseRecord case_record_from_json(const nlohmann::json& j, const std::string& file = "record", const std::string& path = "");
Provenance provenance_from_json(const nlohmann::ordered_json& j, const std::string& file = "provenance",
                                const std::string& path = "provenance");
Provenance provenance_from_json(const nlohmann::json& j, const std::string& file = "provenance",
                                const std::string& path = "provenance");

}  // namespace moe
