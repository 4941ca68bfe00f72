// The per-case record and the provenance in their report.json form, one writer (run_report.cpp) and one reader
// (report_reader.cpp) for every file that carries them: report.json, the run journal (journal.jsonl) and the
// records a worker process sends back to the supervisor (harness/isolation/). A record read back equals the record
// written, every number bit for bit (non-finite numbers are written as null and read back as NaN).
#pragma once
#include <nlohmann/json.hpp>

#include "reports/run_report.hpp"

namespace moe {

nlohmann::ordered_json case_record_to_json(const CaseRecord& c);
nlohmann::ordered_json provenance_to_json(const Provenance& p);
// Both throw nlohmann::json::exception on a missing key or a wrong type; callers name the file.
CaseRecord case_record_from_json(const nlohmann::json& j);
Provenance provenance_from_json(const nlohmann::json& j);

}  // namespace moe
