#include "harness/tuning/set_checks.hpp"

#include <fmt/format.h>

namespace moe {

int SetCheck::defects() const {
  int n = 0;
  for (const SetFinding& f : findings) n += f.defect;
  return n;
}

int SetCheck::exit_code() const { return defects() > 0 ? 1 : checked == 0 && aiter_rows == 0 ? 4 : 0; }

SetCheck check_table_set(const TableSet& s, const TableCheckOptions& o) {
  SetCheck out;
  for (const TuningTable& t : s.tables) {
    const TableCheck c = check_table(t, o);
    for (const TableFinding& f : c.findings)
      out.findings.push_back({fmt::format("{}:{}", t.file, f.line), f.message, f.defect});
    out.rows += c.rows;
    out.checked += c.checked;
    if (t.aiter)
      for (const TuningRow& r : t.rows) out.aiter_rows += r.tag.empty();
  }
  for (const SetFinding& f : s.findings)
    if (!f.duplicate) out.findings.push_back(f);
  return out;
}

}  // namespace moe
