// `check-table --coverage SUITE`: which row of a table set each case of a suite dispatches from on one device
// (given as ARCH:CU, or the live one), by the set's lookup (table_set.hpp rule 6), and the rows of that device no
// case reaches (docs/tuning.md "Coverage").
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/case/case_spec.hpp"
#include "harness/tuning/table_set.hpp"

namespace moe {

struct CaseCoverage {
  std::string case_id;
  std::optional<RowRef> row;  // nullopt: no row of its shape on the device (the kernel's default heuristic)
  std::string rule;           // the lookup rule that chose the row
};

struct Coverage {
  std::vector<CaseCoverage> cases;
  std::vector<RowRef> unreached;  // dispatched rows of the device (its cu_num or 0) that no case's lookup returns
};

Coverage table_coverage(const TableSet& s, const std::vector<CaseSpec>& cases, const std::string& gfx, int cu_num);

// "gfx942:80" -> ("gfx942", 80); bad input (exit 2) naming `option` for anything else.
std::pair<std::string, int> parse_table_device(const std::string& text, const std::string& option);

}  // namespace moe
