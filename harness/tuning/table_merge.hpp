// `tune --merge-into TABLE.csv`: tuner output merged over an existing table only when the complete new row set is
// known and valid (docs/tuning.md "Merging"). While tune runs, each new row is appended as one whole line to
// TABLE.csv.partial beside the table (flushed per row): a crash between rows leaves the table untouched and the rows
// tuned so far there; the next `tune --merge-into` reads them back and tunes only the cases they lack. The table is
// rewritten (atomically) only when no row it replaces goes missing and the merged table has no static defect.
#pragma once
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "harness/tuning/tuner.hpp"
#include "harness/tuning/tuning_table.hpp"

namespace moe {

std::string partial_path(const std::string& table);  // TABLE.csv.partial

// The rows of a partial output; a last line cut short by a crash (no newline) is left out. An absent file: none.
std::vector<TuningRow> read_partial(const std::string& path);

// Appends rows to a partial output, writing the header first into a new file.
class PartialWriter {
 public:
  explicit PartialWriter(const std::string& path);
  void add(const TuningRow& r);  // one whole line, flushed

 private:
  std::string path_;
  std::ofstream out_;
};

struct MergeOutcome {
  TuningTable merged;
  std::vector<std::string> refused;  // why the merge may not be written: each missing key, each static defect
};

// `old`'s rows, those it replaces taken by `fresh`'s rows of the same key, `fresh`'s other rows after them. The rows
// replaced: untagged rows of `old` on the tuned device (gfx, cu_num) whose case_id is one of `tuned_cases`; each
// must have a row of the same key in `fresh` (else it goes missing: refused). The merged table's static defects
// (table_checks.hpp) refuse it too.
MergeOutcome merge_tuned_rows(const TuningTable& old, const std::vector<TuningRow>& fresh,
                              const std::set<std::string>& tuned_cases, const std::string& gfx, int cu_num);

// The whole of `tune --merge-into TABLE`: the table read first (bad input, exit 2, before any work; an AITER table is
// refused), rows of TABLE.partial taken as tuned, every new row appended there as tune chooses it (then passed on to
// o.on_row, when given), and the table rewritten only when the tune had no failed case and the merge is not refused.
// `lines`: what tune prints; exit_code: 0 merged, 1 not merged (the table untouched, the rows in TABLE.partial).
struct MergeInto {
  int exit_code = 0;
  std::vector<std::string> lines;
};
MergeInto tune_merge_into(TuneOptions o, const std::string& table);

}  // namespace moe
