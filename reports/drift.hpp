// `moe-harness compare BASE.json NEW.json`: drift between two runs, matched by (case id, kernel), flagged even when
// both pass: cases that disappeared or became skipped/failed, a changed dispatched variant, min cos dropping or max
// rel growing beyond margins, and any token whose cos dropped (per-token arrays).
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
  std::string id, kernel, kind, detail;  // kind: missing, new, status, skipped, variant, min_cos, max_rel, token_cos
};

std::vector<DriftFinding> compare_reports(const ReadReport& base, const ReadReport& next, const DriftMargins& m);
std::string drift_markdown(const ReadReport& base, const ReadReport& next, const std::vector<DriftFinding>& f);
std::string drift_json(const std::vector<DriftFinding>& f);
// Findings that make the compare fail (everything but newly added cases).
int drift_failures(const std::vector<DriftFinding>& f);

}  // namespace moe
