// A table set: the ordered list of tuned tables a kernel library reads (stock tables, then overlays), resolved by
// one set of rules that every command uses (check-table, run --dispatch-table, coverage; docs/tuning.md "Table
// sets"):
// 1. A row with a non-empty `_tag` takes no part in normal dispatch, in every file alike: it is never dispatched,
//    never overrides, is never overridden and is never a duplicate.
// 2. Two untagged rows of one file with the same key are a defect (the file does not say which it means).
// 3. A later file's row overrides an earlier file's row of the same key (gfx, cu_num, token, the shape columns).
// 4. cu_num = 0 is the any-CU sentinel: on a device of N compute units a row at cu_num N wins over the row at 0 of
//    the same other key, whatever the file order. A later row at cu_num N over an earlier row at 0 of its key, with
//    no earlier row at N of that key, shadows it on N compute units: an override too.
// 5. Every override names both rows (file:line) and must be acknowledged: an `_override` cell on the overriding row,
//    or `--acknowledge-override FILE:LINE` naming it. An acknowledgement that names no overriding row is a defect.
// 6. Lookup for a case on a device: the rows of its shape and gfx at the device's cu_num or at 0 (per token key the
//    exact CU first), then the token rule of tuning_table.hpp `lookup`.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "harness/tuning/table_checks.hpp"
#include "harness/tuning/tuning_table.hpp"

namespace moe {

struct RowRef {
  std::size_t table = 0, row = 0;
};

struct TableOverride {
  RowRef winner, shadowed;
  bool any_cu = false;  // the shadowed row is at cu_num 0 and the winner at an exact CU count
  bool acknowledged = false;
};

struct SetFinding {
  std::string where;  // FILE:LINE, or FILE, or the option
  std::string message;
  bool defect = true;
  bool duplicate = false;  // rule 2 (static_table_findings reports the same finding per file)
};

struct TableSet {
  std::vector<TuningTable> tables;      // in the order read: later overrides earlier
  std::vector<RowRef> dispatched;       // untagged rows no later row of the same key replaces, in file order
  std::vector<RowRef> tagged;
  std::vector<TableOverride> overrides;
  std::vector<SetFinding> findings;     // duplicates within a file, unacknowledged overrides, stale acknowledgements
  const TuningRow& row(RowRef r) const { return tables[r.table].rows[r.row]; }
  std::string where(RowRef r) const;    // FILE:LINE
  int defects() const;
};

// The paths of `--dispatch-table` / check-table arguments: each argument is one path or a list of paths separated by
// ':' (the platform's path-list separator, as a library reads its table list from an environment variable). An
// empty element (`a.csv::b.csv`, a leading or trailing ':', an empty argument) is bad input naming `option`.
std::vector<std::string> split_table_paths(const std::vector<std::string>& arguments,
                                           const std::string& option = "tables");
// The list as one ':'-separated string of absolute paths (what a run's journal and workers carry).
std::string absolute_table_list(const std::vector<std::string>& paths);

// Resolves tables already read (rules 1-5). `acknowledged`: FILE:LINE of overriding rows (--acknowledge-override);
// FILE resolves as a path to tables of the set, else a FILE without a directory names the one table of that file
// name; a file name shared by tables at two paths is ambiguous (bad input, exit 2, naming both).
TableSet resolve_table_set(std::vector<TuningTable> tables, const std::vector<std::string>& acknowledged = {});
// Reads each path (table_file.hpp; bad input exit 2 before any work) and resolves them.
TableSet read_table_set(const std::vector<std::string>& paths, const std::vector<std::string>& acknowledged = {});

// Rule 2 for one table's rows (tagged rows left out): the later row of each duplicated key, naming the earlier.
std::vector<TableFinding> duplicate_key_findings(const TuningTable& t);

struct SetLookup {
  RowRef ref;
  const TuningRow* row = nullptr;
  std::string rule;  // the token rule ("exact", "power of two below", ...), "any-CU row (cu_num=0), " before it
  bool any_cu = false;
};
// Rule 6: the row a case of key.token tokens and key's shape dispatches from on device (key.gfx, key.cu_num).
std::optional<SetLookup> lookup_in_set(const TableSet& s, const TuningRow& key);

// How a report names the row: the file's name (its path as given where two files of the set share a name) and line.
std::string row_label(const TableSet& s, RowRef r);

}  // namespace moe
