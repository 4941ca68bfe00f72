// `moe-harness tune`: for each case of a suite, every dispatch variant the kernel offers is run, judged against the
// contract reference with the case's thresholds, and timed by the kernel (device events, median after warm-up, on
// the GPU; wall time of one run on the host); the fastest variant whose verdict passed is the row's choice, the next
// fastest the runner-up (docs/tuning.md). A variant that fails its verdict is never chosen. A case whose token count
// the lookup rule would never reach as a key gets no row: it is judged with the choice of the row it dispatches from.
#pragma once
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "harness/tuning/dispatch_lookup.hpp"  // TableDevice, table_device
#include "harness/tuning/table_set.hpp"
#include "harness/tuning/tuning_table.hpp"
#include "kernels/kernel_under_test.hpp"

namespace moe {

struct TuneOptions {
  std::string suite;
  std::vector<std::string> filters;
  std::string kernel = "host";
  double host_budget = 0;
  // `--merge-into` (table_merge.hpp): rows a partial output already holds, whose cases are not tuned again; and a
  // call per new row, as soon as it is chosen.
  std::vector<TuningRow> done;
  std::function<void(const TuningRow&)> on_row;
};

struct TuneResult {
  TuningTable table;
  std::vector<std::string> notes;  // per case not tuned: why (gated, exact tier, no passing variant)
  int failed_cases = 0;  // cases where no variant passed, or whose table row's choice fails at their count (exit 1)
  std::set<std::string> tuned_cases;  // the statistical cases selected for tuning (a row each, or a note)
  std::string gfx;                    // the device the rows are keyed on
  int cu_num = 0;
  // The stop signal (harness/isolation/stop_signal.hpp) that ended the tune early: the rows are those of the cases
  // whose every variant ran before it (no row from a case cut short); "" for a whole tune.
  std::string interrupted;
};

TuneResult tune(const TuneOptions& o);

}  // namespace moe
