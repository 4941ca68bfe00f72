// Fuzz target: the run journal reader (harness/isolation/journal.hpp) on arbitrary bytes, as `moe-harness report DIR`
// and `run --resume DIR` read DIR/journal.jsonl, then the report rebuilt from it and the check that its records
// belong to its run (harness/isolation/journal_checks.hpp). What it accepts must be consistent: every record sits
// at a slot below kMaxJournalSlot and names the journal line it came from.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fixtures/fuzz/fuzz_contract.hpp"
#include "harness/fuzz/temp_dir.hpp"
#include "harness/isolation/journal.hpp"
#include "harness/isolation/journal_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static moe::fuzz::TempDir dir;
  const std::string& d = dir.hold("journal.jsonl", data, size);
  moe::fuzz::expect_accept_or_bad_input(d, [&] {
    const moe::Journal j = moe::read_journal(d);
    for (const auto& [slot, rec] : j.records)
      if (slot >= moe::kMaxJournalSlot || !j.record_lines.count(slot)) std::abort();
    const moe::RunReport r = moe::report_from_journal(j);
    if (r.cases.size() != j.records.size()) std::abort();
    moe::check_journal_records(j);
  });
  return 0;
}
