// The run journal's schema (docs/reliability.md "The other files the harness reads", **Run journal**), as strict as
// a case file's: each line's type, its keys (no other), their types and ranges; the start line's run options, and
// their agreement with its provenance. The order of the lines is read_journal()'s (journal.cpp).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace moe {

enum class JournalLine { start, plan, record, resume, end };

// The line's type after checking its keys and their types and ranges; bad input naming `where` and the key.
JournalLine check_journal_line(const nlohmann::ordered_json& line, const std::string& where);

// The start line's run_digest: each run option's SHA-256 (its JSON text, the first 16 hex digits), written beside the
// options so that an option edited afterwards is found and named (`run.host_budget`), not resumed with.
nlohmann::ordered_json run_digests(const nlohmann::ordered_json& run);

// The start line's run options: every key of run_options_to_json() with its type and range, no other, and the seed
// and sequence seed the provenance states, and (when the start line has its run_digest) each option equal to what
// the run wrote. Bad input naming `where` and the key (`run.seed`, ...).
void check_journal_run(const nlohmann::ordered_json& start, const std::string& where);

}  // namespace moe
