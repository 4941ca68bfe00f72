// `moe-harness compare BASE.json NEW.json`: drift between two runs, matched by (case id, kernel), flagged even when
// both pass: cases that disappeared or became skipped/failed, a changed dispatched variant, other fixture inputs
// (fingerprints differ: another seed or generator), min cos dropping or max rel growing beyond margins, any token
// whose cos dropped, another token count, and any NaN or absent verdict metric (a NaN compares false with every
// margin, so it is a finding of its own, never a silent pass).
#pragma once
#include <string>
#include <vector>

#include "reports/report_reader.hpp"

namespace moe {

struct DriftMargins {
  double cos_drop = 1e-4;    // min cos (and any token's cos) may drop by this much
  double rel_factor = 2.0;   // max rel may grow by this factor ...
  double rel_floor = 1e-5;   // ... once above this absolute value
};

struct DriftFinding {
  // kind: status, missing, non_finite, fixture, contract, token_count, skipped, min_cos, max_rel, token_cos, variant (these
  // fail the compare), new, missing_skipped (information: a case added, a case the base skipped and the new run lacks)
  std::string id, kernel, kind, detail;
  bool fails = true;         // counts toward compare's exit 1
  bool new_failure = false;  // the new run fails (or errors) where the base did not
};

// The findings ranked: new failures first, then the other failing kinds in the order above, information last.
// `kernels` (full ids) restricts both reports to those kernels; empty: every kernel.
std::vector<DriftFinding> compare_reports(const ReadReport& base, const ReadReport& next, const DriftMargins& m,
                                          const std::vector<std::string>& kernels = {});
std::string drift_markdown(const ReadReport& base, const ReadReport& next, const std::vector<DriftFinding>& f);
std::string drift_json(const std::vector<DriftFinding>& f);
// Findings that make the compare fail.
int drift_failures(const std::vector<DriftFinding>& f);

}  // namespace moe
