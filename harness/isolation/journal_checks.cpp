#include "harness/isolation/journal_checks.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>

#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"

namespace moe {

void check_journal_records(const Journal& j) {
  const Provenance p = journal_provenance(j);
  std::set<std::string> kernels;
  for (const auto& [id, version] : p.kernels) kernels.insert(id);
  // The suite's case ids, when its file is still the one the run read (a changed or missing file: `run --resume`
  // refuses it; `report` rebuilds from the records alone).
  std::set<std::string> cases;
  bool suite_known = false;
  try {
    const Suite s = load_suite_file(p.suite_file);
    if (s.file_hash == p.suite_hash) {
      suite_known = true;
      for (const CaseSpec& c : s.cases) cases.insert(c.id);
    }
  } catch (const std::exception&) {
  }
  const char* fix = "a journal holds the records of one run only: restore it, or rerun the suite";
  std::map<std::pair<std::string, std::string>, std::size_t> seen;  // (kernel, case) -> its line
  for (const auto& [slot, r] : j.records) {
    const std::size_t line = j.record_lines.count(slot) ? j.record_lines.at(slot) : 0;
    const std::string where = fmt::format("{}:{}", j.file.string(), line);
    if (!kernels.count(r.kernel))
      throw_bad_input(where, "record.kernel",
                      fmt::format("foreign record: kernel '{}' ({}) is not a kernel of this run", r.kernel, r.id), fix);
    if (suite_known && !cases.count(r.id))
      throw_bad_input(where, "record.id",
                      fmt::format("foreign record: case '{}' is not a case of the run's suite {}", r.id, p.suite_file),
                      fix);
    if (const auto [it, fresh] = seen.emplace(std::make_pair(r.kernel, r.id), line); !fresh)
      throw_bad_input(where, "slot",
                      fmt::format("foreign record: {} {} is recorded again under slot {} (first at line {})", r.kernel,
                                  r.id, slot, it->second),
                      fix);
  }
}

}  // namespace moe
