// `moe-harness check-table`: what a tuned table claims, checked (docs/tuning.md). Defects (exit 1): a time or error
// that is zero, negative, missing or not finite (placeholders, not measurements); a duplicated key; a row made by
// another version of the kernel than this build's; a token key the lookup rule never reaches between its own count
// and the next key; and, with a suite, a row whose variant does not pass its case here, does not run the variant the
// row names, claims an error above the case's max_rel or below half of the error it reproduces (a measured error
// may be 0: a kernel bit-equal to the contract; without a suite it is not reproduced). A row keyed on another device
// (arch or compute units) is not checked, saying both values: never counted as passed.
#pragma once
#include <string>
#include <vector>

#include "harness/tuning/tuning_table.hpp"

namespace moe {

struct TableFinding {
  int line = 0;
  std::string message;
  bool defect = true;  // false: the row was not checked (another device, no suite to reproduce it)
};

struct TableCheckOptions {
  std::string suite;  // empty: no reproduction of the rows' verdicts
  bool require_device = false;  // rows of another device are defects, not "not checked"
  double host_budget = 0;
};

struct TableCheck {
  std::vector<TableFinding> findings;
  int rows = 0, checked = 0;  // checked: rows every check ran on
  int defects() const;
};

// Empty when a between-bucket token count of r's shape (between r's count and the next key of the shape, or up to
// 2 r.token + 2 past the last key) dispatches from r; else why r serves only its own count (the lookup rule takes
// another row there): a key a table should not carry.
std::string unreached_message(const TuningTable& t, const TuningRow& r);

// The static checks only (no kernel runs): values, duplicates, the lookup rule.
std::vector<TableFinding> static_table_findings(const TuningTable& t);
TableCheck check_table(const TuningTable& t, const TableCheckOptions& o);

}  // namespace moe
