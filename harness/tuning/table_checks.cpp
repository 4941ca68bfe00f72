#include "harness/tuning/table_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/run/kernel_registry.hpp"
#include "harness/case/case_thresholds.hpp"
#include "harness/tuning/table_set.hpp"
#include "harness/tuning/tuner.hpp"
#include "kernels/runtime/device_info.hpp"

namespace moe {
namespace {

// A measured value a row must carry: present, finite and positive (an error may be a measured 0: check_table
// reproduces it).
void require_measured(std::vector<TableFinding>& out, const TuningRow& r, const char* column, double v,
                      const char* what, bool zero_allowed = false) {
  if (std::isnan(v) || std::isinf(v))
    out.push_back({r.line, fmt::format("{} {} is not finite: a tuner that accepted a non-finite measurement", column, v)});
  else if (v < 0)
    out.push_back({r.line, fmt::format("{} {} is negative: not a {}", column, v, what)});
  else if (v == 0 && !zero_allowed)
    out.push_back({r.line, fmt::format("{} is zero or missing: a placeholder, not a measured {}", column, what)});
}

}  // namespace

std::string unreached_message(const TuningTable& t, const TuningRow& r) {
  std::int64_t next = -1;
  for (const TuningRow& o : t.rows)
    if (same_shape(o, r) && o.token > r.token && (next < 0 || o.token < next)) next = o.token;
  const std::int64_t end = next > 0 ? next : 2 * r.token + 2;
  if (end <= r.token + 1) return "";
  TuningRow key = r;
  std::int64_t taken_at = -1, taken = -1;
  for (std::int64_t n = r.token + 1; n < end && n < r.token + 4096; ++n) {
    key.token = n;
    const auto l = lookup(t, key);
    if (l && l->row == &r) return "";
    if (l && taken < 0) taken_at = n, taken = l->row->token;
  }
  return fmt::format("token key {} is reached only at exactly {}: at {} (between it and {}) the lookup rule takes the "
                     "row at token {} (power of two below first, then coarse tiers)",
                     r.token, r.token, taken_at, next > 0 ? std::to_string(next) : "the next tier", taken);
}

int TableCheck::defects() const {
  int n = 0;
  for (const TableFinding& f : findings) n += f.defect;
  return n;
}

std::vector<TableFinding> static_table_findings(const TuningTable& all) {
  // Tagged rows take no part in dispatch (table_set.hpp rule 1): no check judges them.
  TuningTable t{all.file, {}, all.aiter};
  for (const TuningRow& r : all.rows)
    if (r.tag.empty()) t.rows.push_back(r);
  std::vector<TableFinding> out = duplicate_key_findings(t);
  for (const TuningRow& r : t.rows) {
    require_measured(out, r, "us", r.us, "time");
    require_measured(out, r, "err", r.err, "error", true);
    if (!r.runner_up.empty()) {
      require_measured(out, r, "runner_up_us", r.runner_up_us, "time");
      require_measured(out, r, "runner_up_err", r.runner_up_err, "error", true);
    }
    if (r.token <= 0) out.push_back({r.line, fmt::format("token {} is not a token count", r.token)});
  }
  // The lookup rule works within one shape: each shape's rows on their own (one pass to group them).
  std::unordered_map<std::string, TuningTable> shapes;
  for (const TuningRow& r : t.rows)
    if (r.token > 0) shapes[shape_cells(r)].rows.push_back(r);
  for (const auto& [shape, rows] : shapes)
    for (const TuningRow& r : rows.rows)
      if (std::string m = unreached_message(rows, r); !m.empty()) out.push_back({r.line, m});
  std::stable_sort(out.begin(), out.end(), [](const TableFinding& a, const TableFinding& b) { return a.line < b.line; });
  return out;
}

TableCheck check_table(const TuningTable& t, const TableCheckOptions& o) {
  TableCheck res;
  res.rows = int(t.rows.size());
  res.findings = static_table_findings(t);
  std::optional<Suite> suite;
  if (!o.suite.empty()) suite = load_suite_file(resolve_suite(o.suite));
  const DeviceDetection detection = detect_device();
  for (const TuningRow& r : t.rows) {
    const std::size_t before = res.findings.size();
    if (!r.tag.empty()) {
      res.findings.push_back({r.line, "not checked: tagged '" + r.tag + "', out of normal dispatch", false});
      continue;
    }
    if (t.aiter) {
      res.findings.push_back({r.line, "not checked: an AITER row (no harness kernel runs it; its values, key and "
                                      "place in the set are)", false});
      continue;
    }
    if (!is_builtin_kernel_id(r.kernel_id)) {
      res.findings.push_back({r.line, "kernel '" + r.kernel_id + "' is no kernel of this harness"});
      continue;
    }
    auto kernel = make_kernel_by_id(r.kernel_id, o.host_budget);
    const TableDevice dev = table_device(kernel->needs_device(), detection);
    if (dev.gfx != r.gfx || (dev.cu_num != r.cu_num && r.cu_num != 0)) {  // cu_num 0: any CU count
      res.findings.push_back(
          {r.line,
           fmt::format("not checked: the row is for {} with {} compute units, this device is {} with {}{}", r.gfx,
                       r.cu_num, dev.known ? dev.gfx : "unidentified", dev.cu_num, dev.known ? "" : " (" + dev.message + ")"),
           o.require_device});
      continue;
    }
    if (r.kernel_version != kernel->version())
      res.findings.push_back({r.line, fmt::format("made by {} version '{}'; this build's is '{}': retune it",
                                                  r.kernel_id, r.kernel_version, kernel->version())});
    if (!suite) {
      res.findings.push_back({r.line, "not checked: no --suite, so its error is not reproduced here", false});
      continue;
    }
    const CaseSpec* c = nullptr;
    for (const CaseSpec& s : suite->cases) if (s.id == r.case_id) c = &s;
    if (!c) {
      res.findings.push_back({r.line, "case '" + r.case_id + "' is not in suite " + o.suite});
      continue;
    }
    kernel->select_dispatch(r.dispatch);
    PipelineOptions po;
    po.seed = row_seed(r);
    const CaseRecord rec = execute_case(*c, *kernel, detection, po);
    const double max_rel = case_thresholds(*c).max_rel;
    if (rec.status != Status::pass)
      res.findings.push_back({r.line, fmt::format("dispatch '{}' does not pass its case here: {} ({}: {})", r.dispatch,
                                                  to_string(rec.status), name(rec.failed_check), rec.reason)});
    else if (rec.variant != r.kernel_name)
      res.findings.push_back({r.line, fmt::format("dispatch '{}' ran {}, the row names {}", r.dispatch, rec.variant,
                                                  r.kernel_name)});
    const double got = judged_max_rel(rec);  // what the verdict judged: a band token's rel is bounded by its edge
    if (rec.status == Status::pass && !(r.err >= 0.5 * got))
      res.findings.push_back({r.line, fmt::format("err {} is below half of what its variant reproduces here ({}): "
                                                  "not a measurement of this variant", r.err, got)});
    if (r.err > max_rel)
      res.findings.push_back({r.line, fmt::format("err {} is above the case's max_rel {}: a variant that failed its "
                                                  "verdict was chosen", r.err, max_rel)});
    if (res.findings.size() == before) ++res.checked;
  }
  return res;
}

}  // namespace moe
