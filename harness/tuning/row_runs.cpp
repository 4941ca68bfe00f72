#include "harness/tuning/row_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/run/kernel_registry.hpp"
#include "harness/isolation/stop_signal.hpp"
#include "harness/tuning/tuner.hpp"
#include "kernels/runtime/device_info.hpp"

namespace moe {

RowRuns run_table_rows(const TableSet& s, const RowRunOptions& o) {
  RowRuns out;
  const Suite suite = load_suite_file(resolve_suite(o.suite));
  const DeviceDetection detection = detect_device();
  WeightCache weights;
  for (const RowRef ref : s.dispatched) {
    if (stop_requested()) break;
    const TuningRow& r = s.row(ref);
    const std::string where = s.where(ref);
    if (s.tables[ref.table].aiter) continue;  // no harness kernel runs an AITER row
    if (!is_builtin_kernel_id(r.kernel_id)) {
      out.findings.push_back({where, "not run: kernel '" + r.kernel_id + "' is no kernel of this harness"});
      continue;
    }
    auto kernel = make_kernel_by_id(r.kernel_id, o.host_budget);
    const TableDevice dev = table_device(kernel->needs_device(), detection);
    if (!dev.known || dev.gfx != r.gfx || (dev.cu_num != r.cu_num && r.cu_num != 0)) {
      out.findings.push_back({where, fmt::format("not run: the row is for {} with {} compute units, this device is {} "
                                                 "with {}", r.gfx, r.cu_num, dev.known ? dev.gfx : "unidentified",
                                                 dev.cu_num), o.require_device});
      continue;
    }
    const auto c = std::find_if(suite.cases.begin(), suite.cases.end(), [&](const CaseSpec& x) { return x.id == r.case_id; });
    if (c == suite.cases.end()) {
      out.findings.push_back({where, "case '" + r.case_id + "' is not in suite " + o.suite});
      continue;
    }
    const auto l = lookup_in_set(s, key_of(*c, dev.gfx, dev.cu_num));
    if (!l || l->ref.table != ref.table || l->ref.row != ref.row) {
      out.findings.push_back({where, fmt::format("not run: its case dispatches from {} here", l ? s.where(l->ref) : "no row"),
                              false});
      continue;
    }
    kernel->set_timing(true);
    PipelineOptions po;
    po.weights = &weights;
    po.dispatch_table = &s;  // the dispatch path's own lookup selects the row's choice
    po.seed = row_seed(r);
    const CaseRecord rec = execute_case(*c, *kernel, detection, po);
    ++out.run;
    if (rec.status != Status::pass) {
      out.findings.push_back({where, fmt::format("its variant does not pass its case through the lookup: {} ({}: {}); "
                                                 "its err column says {}", to_string(rec.status),
                                                 name(rec.failed_check), rec.reason, r.err)});
      continue;
    }
    if (rec.variant.rfind(r.kernel_name + " [table ", 0) != 0) {
      out.findings.push_back({where, fmt::format("ran '{}', the row names {}", rec.variant, r.kernel_name)});
      continue;
    }
    ++out.passed;
    const double ratio = rec.kernel_us > 0 && r.us > 0 ? std::max(rec.kernel_us / r.us, r.us / rec.kernel_us) : INFINITY;
    if (!(ratio <= o.drift_factor)) {
      ++out.drifted;
      out.findings.push_back({where, fmt::format("drift: measured {:.4g} us through the lookup, the row says {:.4g} us "
                                                 "(a factor {:.3g}, above {})", rec.kernel_us, r.us, ratio,
                                                 o.drift_factor)});
      continue;
    }
    out.findings.push_back({where, fmt::format("run: passes in {:.4g} us (the row: {:.4g} us)", rec.kernel_us, r.us),
                            false});
  }
  out.interrupted = stop_signal_name();
  return out;
}

}  // namespace moe
