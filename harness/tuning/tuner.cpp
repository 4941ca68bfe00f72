#include "harness/tuning/tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>

#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/run/kernel_registry.hpp"
#include "harness/run/provenance.hpp"
#include "harness/run/runner.hpp"
#include "harness/isolation/stop_signal.hpp"
#include "harness/tuning/table_checks.hpp"
#include "kernels/runtime/device_info.hpp"

namespace moe {
namespace {

struct Tried {
  std::string choice, variant;
  double us = 0, err = 0;
  bool passed = false;
  std::string why;  // a failed variant: its check and reason
};

std::string utc_date() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

int block_m_of(const std::string& variant) {
  if (variant.rfind("grouped-t2", 0) == 0 || variant.rfind("grouped-mma-decode", 0) == 0) return 2;
  if (variant.rfind("grouped-t8", 0) == 0 || variant.rfind("grouped-mma", 0) == 0) return 8;
  return 0;
}

// A case whose token count is no key the lookup reaches (a row at 5 between rows at 4 and 8: at 6 and 7 the power
// of two below wins) gets no row of its own: its count dispatches from the row the lookup gives it, so that row's
// choice is run and judged at this count; a choice that fails here makes it a case without a passing dispatch.
// Dropping a row never makes another row unreached, so one pass in table order settles every key.
void drop_unreached_keys(TuneResult& res, KernelUnderTest& kernel, const DeviceDetection& detection,
                         const PipelineOptions& po, std::vector<const CaseSpec*>& row_case) {
  auto& rows = res.table.rows;
  for (std::size_t i = 0; i < rows.size();) {
    if (unreached_message(res.table, rows[i]).empty()) {
      ++i;
      continue;
    }
    const TuningRow gone = rows[i];
    const CaseSpec& c = *row_case[i];
    rows.erase(rows.begin() + std::ptrdiff_t(i));
    row_case.erase(row_case.begin() + std::ptrdiff_t(i));
    const auto l = lookup(res.table, gone);
    if (!l) continue;  // unreachable: a shadowed key always has another row of its shape
    kernel.select_dispatch(l->row->dispatch);
    const CaseRecord rec = execute_case(c, kernel, detection, po);
    kernel.select_dispatch("");
    const std::string head =
        fmt::format("{}: token {} is no key the lookup reaches (no row written); it dispatches from the row at token "
                    "{} ({}), whose choice", c.id, gone.token, l->row->token, l->rule);
    if (rec.status == Status::pass) {
      res.notes.push_back(fmt::format("{} {} passes here in {} us (its own fastest: {} in {} us)", head, rec.variant,
                                      rec.kernel_us, gone.kernel_name, gone.us));
    } else {
      ++res.failed_cases;
      res.notes.push_back(fmt::format("{} {} does not pass here: {} ({}: {})", head, rec.variant,
                                      to_string(rec.status), name(rec.failed_check), rec.reason));
    }
  }
}

// The row a partial output holds for case `id` on this device, if any.
const TuningRow* done_row(const std::vector<TuningRow>& done, const std::string& id, const TableDevice& dev) {
  for (const TuningRow& r : done)
    if (r.case_id == id && r.gfx == dev.gfx && r.cu_num == dev.cu_num) return &r;
  return nullptr;
}

}  // namespace

TuneResult tune(const TuneOptions& o) {
  TuneResult res;
  const Suite suite = load_suite_file(resolve_suite(o.suite));
  auto kernel = make_kernel_by_id(o.kernel, o.host_budget);
  const DeviceDetection detection = detect_device();
  const TableDevice dev = table_device(kernel->needs_device(), detection);
  if (!dev.known)
    throw_harness_error("tune", "the device the table would be keyed on cannot be identified: " + dev.message,
                        "run tune on the machine the table is for");
  res.gfx = dev.gfx;
  res.cu_num = dev.cu_num;
  WeightCache weights;
  PipelineOptions po;
  po.weights = &weights;
  po.rerun_probe = po.linearity_probe = po.token_probes = false;  // timing and the verdict decide; `run` probes the chosen variant
  kernel->set_timing(true);
  std::vector<const CaseSpec*> row_case;  // the case of each row
  for (const CaseSpec& c : suite.cases) {
    if (stop_requested()) break;
    if (!case_selected(o.filters, c.id)) continue;
    if (c.tier == Tier::exact) {
      res.notes.push_back(c.id + ": exact tier (a correctness fixture, not a shape to tune)");
      continue;
    }
    res.tuned_cases.insert(c.id);
    if (const TuningRow* d = done_row(o.done, c.id, dev)) {
      res.notes.push_back(fmt::format("{}: tuned before (partial output line {}), not run again", c.id, d->line));
      res.table.rows.push_back(*d);
      row_case.push_back(&c);
      continue;
    }
    std::vector<Tried> tried;
    for (const std::string& choice : kernel->dispatch_variants(c.problem)) {
      if (stop_requested()) break;
      kernel->select_dispatch(choice);
      const CaseRecord rec = execute_case(c, *kernel, detection, po);
      if (rec.status == Status::skip) {
        res.notes.push_back(c.id + ": not run here: " + rec.reason);
        break;
      }
      const double err = judged_max_rel(rec);
      Tried t{choice, rec.variant, rec.kernel_us, std::isnan(err) ? 0.0 : err,
              rec.status == Status::pass, std::string(name(rec.failed_check)) + ": " + rec.reason};
      tried.push_back(std::move(t));
    }
    kernel->select_dispatch("");
    if (stop_requested()) break;  // a case whose variants were cut short gets no row
    if (tried.empty()) continue;
    std::vector<const Tried*> passing;
    for (const Tried& t : tried) {
      if (t.passed) passing.push_back(&t);
      else res.notes.push_back(fmt::format("{}: variant {} failed its verdict ({}), never chosen", c.id, t.variant, t.why));
    }
    if (passing.empty()) {
      ++res.failed_cases;
      continue;
    }
    std::stable_sort(passing.begin(), passing.end(), [](auto* a, auto* b) { return a->us < b->us; });
    TuningRow r = key_of(c, dev.gfx, dev.cu_num);
    r.block_m = block_m_of(passing[0]->variant);
    r.us = passing[0]->us;
    r.err = passing[0]->err;
    r.kernel_name = passing[0]->variant;
    r.dispatch = passing[0]->choice;
    if (passing.size() > 1) {
      r.runner_up = passing[1]->variant;
      r.runner_up_us = passing[1]->us;
      r.runner_up_err = passing[1]->err;
    }
    r.kernel_id = kernel->id();
    r.kernel_version = kernel->version();
    r.harness_commit = harness_build_stamp();
    r.device_name = dev.name;
    r.driver = dev.driver;
    r.date = utc_date();
    r.seed = std::to_string(c.problem.seed);
    res.table.rows.push_back(std::move(r));
    row_case.push_back(&c);
    if (o.on_row) o.on_row(res.table.rows.back());
  }
  res.interrupted = stop_signal_name();
  if (res.interrupted.empty()) drop_unreached_keys(res, *kernel, detection, po, row_case);
  return res;
}

}  // namespace moe
