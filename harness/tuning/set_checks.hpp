// `check-table` on a table set: each file's checks (table_checks.hpp: values, duplicates, unreached keys, and with a
// suite each row reproduced), then the set's resolution findings (table_set.hpp: overrides, acknowledgements).
#pragma once
#include <vector>

#include "harness/tuning/table_checks.hpp"
#include "harness/tuning/table_set.hpp"

namespace moe {

struct SetCheck {
  std::vector<SetFinding> findings;  // FILE:LINE, in set order, then the set's own
  int rows = 0, checked = 0;         // checked: rows of harness kernels every check ran on
  int aiter_rows = 0;                // untagged rows of AITER tables: checked statically (no kernel of ours runs them)
  int defects() const;
  // 1: a defect; 4: nothing checked (no row of a harness kernel fully checked and no AITER row); else 0.
  int exit_code() const;
};

SetCheck check_table_set(const TableSet& s, const TableCheckOptions& o);

}  // namespace moe
