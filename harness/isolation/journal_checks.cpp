#include "harness/isolation/journal_checks.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>

#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/run/runner.hpp"

namespace moe {

void check_journal_records(const Journal& j) {
  const Provenance p = journal_provenance(j);
  std::vector<std::string> kernels;  // in the run's order: a test's slot is kernel index x cases + case index
  for (const auto& [id, version] : p.kernels) kernels.push_back(id);
  // The run's selected case ids in its order, when the suite file is still the one the run read (a changed or
  // missing file: `run --resume` refuses it; `report` rebuilds from the records alone).
  std::vector<std::string> cases;
  bool suite_known = false;
  try {
    const nlohmann::ordered_json& run = j.start.at("run");
    std::optional<std::uint64_t> sequence_seed;
    if (run.contains("sequence_seed") && !run["sequence_seed"].is_null())
      sequence_seed = run["sequence_seed"].get<std::uint64_t>();
    const auto filters = run.at("filters").get<std::vector<std::string>>();
    const Suite s = load_suite_file(p.suite_file, sequence_seed);
    if (s.file_hash == p.suite_hash) {
      suite_known = true;
      for (const CaseSpec& c : s.cases)
        if (case_selected(filters, c.id)) cases.push_back(c.id);
    }
  } catch (const std::exception&) {
  }
  const std::set<std::string> kernel_set(kernels.begin(), kernels.end()), case_set(cases.begin(), cases.end());
  const char* fix = "a journal holds the records of one run only: restore it, or rerun the suite";
  // Every record line, also one a later line for its slot replaced: a foreign record is refused wherever it stands.
  for (const JournalRecordLine& r : j.record_lines_read) {
    const std::string where = fmt::format("{}:{}", j.file.string(), r.line);
    if (!kernel_set.count(r.kernel))
      throw_bad_input(where, "record.kernel",
                      fmt::format("foreign record: kernel '{}' ({}) is not a kernel of this run", r.kernel, r.id), fix);
    if (suite_known && !case_set.count(r.id))
      throw_bad_input(
          where, "record.id",
          fmt::format("foreign record: case '{}' is not a case the run selected from its suite {}", r.id, p.suite_file),
          fix);
    const CaseRecord& kept = j.records.at(r.slot);
    if (kept.kernel != r.kernel || kept.id != r.id)
      throw_bad_input(where, "slot",
                      fmt::format("foreign record: slot {} holds {} {} here and {} {} at line {}", r.slot, r.kernel,
                                  r.id, kept.kernel, kept.id, j.record_lines.at(r.slot)),
                      fix);
  }
  std::map<std::pair<std::string, std::string>, std::size_t> seen;  // (kernel, case) -> its line
  for (const auto& [slot, r] : j.records) {
    const std::size_t line = j.record_lines.at(slot);
    const std::string where = fmt::format("{}:{}", j.file.string(), line);
    if (const auto [it, fresh] = seen.emplace(std::make_pair(r.kernel, r.id), line); !fresh)
      throw_bad_input(where, "slot",
                      fmt::format("foreign record: {} {} is recorded again under slot {} (first at line {})", r.kernel,
                                  r.id, slot, it->second),
                      fix);
    if (!suite_known) continue;
    // The slot the run registered this (case, kernel) under (harness/run/runner.cpp: kernels outer, cases inner).
    if (cases.empty() || slot >= kernels.size() * cases.size())
      throw_bad_input(where, "slot",
                      fmt::format("foreign record: slot {} ({} {}) is past the run's {} test(s)", slot, r.kernel, r.id,
                                  kernels.size() * cases.size()),
                      fix);
    const std::string& kernel = kernels[slot / cases.size()];
    const std::string& id = cases[slot % cases.size()];
    if (r.kernel != kernel || r.id != id)
      throw_bad_input(
          where, "slot",
          fmt::format("foreign record: slot {} holds {} {}, the run has {} {} there", slot, r.kernel, r.id, kernel, id),
          fix);
  }
}

}  // namespace moe
