#include "harness/tuning/coverage.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <set>

#include "fixtures/error.hpp"
#include "harness/tuning/tuning_table.hpp"

namespace moe {

Coverage table_coverage(const TableSet& s, const std::vector<CaseSpec>& cases, const std::string& gfx, int cu_num) {
  Coverage out;
  std::set<std::pair<std::size_t, std::size_t>> reached;
  for (const CaseSpec& c : cases) {
    CaseCoverage cc{c.id, std::nullopt, ""};
    if (const auto l = lookup_in_set(s, key_of(c, gfx, cu_num))) {
      cc.row = l->ref;
      cc.rule = l->rule;
      reached.insert({l->ref.table, l->ref.row});
    }
    out.cases.push_back(std::move(cc));
  }
  for (const RowRef r : s.dispatched) {
    const TuningRow& row = s.row(r);
    if (row.gfx == gfx && (row.cu_num == cu_num || row.cu_num == 0) && !reached.count({r.table, r.row}))
      out.unreached.push_back(r);
  }
  return out;
}

std::pair<std::string, int> parse_table_device(const std::string& text, const std::string& option) {
  const std::size_t colon = text.rfind(':');
  char* end = nullptr;
  const long cu = colon == std::string::npos ? -1 : std::strtol(text.c_str() + colon + 1, &end, 10);
  if (colon == 0 || colon == std::string::npos || colon + 1 == text.size() || *end != '\0' || cu <= 0 || cu > 100000)
    throw_bad_input("command line", option, "'" + text + "' is not ARCH:CU",
                    "name the device as its arch and compute units, e.g. gfx942:80 or sm_90:132");
  return {text.substr(0, colon), int(cu)};
}

}  // namespace moe
