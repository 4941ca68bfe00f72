// `check-table --run SUITE`: every reachable row of a table set judged and timed through the lookup `run
// --dispatch-table` uses (docs/tuning.md "Running every row"). For each dispatched row of a harness kernel on this
// device, its case (the suite's case of the row's case_id) runs with the set as its dispatch table: the row must be
// the one the lookup gives that case (else it is reachable only elsewhere: not run, said so), the verdict must pass
// (a row whose variant fails is a defect, whatever its `err` says), the variant run must be the one the row names,
// and the kernel time must be within `drift_factor` of the row's `us` either way (else drift, a defect).
#pragma once
#include <string>
#include <vector>

#include "harness/tuning/table_set.hpp"

namespace moe {

struct RowRunOptions {
  std::string suite;
  double drift_factor = 3;
  bool require_device = false;  // rows of another device are defects, not "not run"
  double host_budget = 0;
};

struct RowRuns {
  std::vector<SetFinding> findings;
  int run = 0, passed = 0, drifted = 0;
  // The stop signal (harness/isolation/stop_signal.hpp) that ended the runs early, after the row in flight; "" when
  // every reachable row was run.
  std::string interrupted;
};

RowRuns run_table_rows(const TableSet& s, const RowRunOptions& o);

}  // namespace moe
