// Reports from records: provenance, then report.json, junit.xml, summary.md and report.html, the files `run`
// writes (schema: reports/schema/run_report.schema.json), and the reader that `compare`, `merge`, `gate` use.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "moe_harness/types.hpp"

namespace moe::api {

// The harness's version ("0.1.0") and the source tree this library was built from (commit, "+dirty.<hash>").
std::string version();
std::string build_stamp();

// Provenance for a report of `suite`'s records: this build, `kernels` as (id, version) (a client adds its own, e.g.
// torch and triton versions), the device, the seed override ("case" when none) and the host; start_time is now.
Provenance make_provenance(const Suite& suite, const std::vector<std::pair<std::string, std::string>>& kernels,
                           const DeviceDetection& device, std::optional<std::uint64_t> seed = {});

// The current UTC time as ISO 8601 (Provenance start_time and end_time).
std::string utc_now();

// Writes the report files of `report` into `dir` (created): report.json, junit.xml, summary.md, report.html; each
// atomically. Returns their paths. A `dir` that cannot take them is bad input (key "dir"), nothing written.
ReportFiles write_reports(const RunReport& report, const std::filesystem::path& dir);

// Whether `dir` can be the report directory: an existing directory files can be created in, or one that can be
// created. Bad input (exit 2) naming `dir` and `key` (the option or argument that gave it) otherwise; so a client
// checks its output location before it does any work.
void check_report_dir(const std::filesystem::path& dir, const std::string& key);

// Reads a report.json back (every field checked; bad input names the file and the field's key).
ReadReport read_report(const std::filesystem::path& file);

}  // namespace moe::api
