#include "harness/tuning/coverage.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <set>

#include "fixtures/error.hpp"
#include "fixtures/strict_number.hpp"
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
  const std::string fix = "name the device as its arch and compute units, e.g. gfx942:80 or sm_90:132";
  if (colon == 0 || colon == std::string::npos)
    throw_bad_input("command line", option, "'" + text + "' is not ARCH:CU", fix);
  std::int64_t cu = 0;
  if (const NumberProblem p = parse_whole(std::string_view(text).substr(colon + 1), 1, 100000, cu))
    throw_bad_input("command line", option, "'" + text + "' is not ARCH:CU: the compute units " + p.problem, fix);
  return {text.substr(0, colon), int(cu)};
}

}  // namespace moe
