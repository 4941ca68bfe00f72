#include "harness/isolation/case_context.hpp"

#include <fmt/format.h>

#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/run/kernel_registry.hpp"
#include "kernels/plugin/unloadable_plugin.hpp"

namespace moe {

CaseContext::CaseContext(const ExecConfig& config, std::vector<std::shared_ptr<KernelUnderTest>> extra)
    : requirement_(config.device), weights_(std::size_t(6) << 30, config.reference_cache) {
  for (const std::string& f : config.suite_files)
    for (CaseSpec& c : load_suite_file(f, config.sequence_seed).cases) cases_.push_back(std::move(c));
  for (const std::string& id : config.kernel_ids)
    kernels_.push_back(make_kernel_by_id(id, config.host_budget, config.dispatch));
  for (const std::string& spec : config.plugins) {  // PATH or PATH~MUTANT
    const auto known = config.plugin_load_failures.find(spec);
    kernels_.push_back(make_plugin_kernel(spec, known == config.plugin_load_failures.end()
                                                    ? std::nullopt
                                                    : std::optional<PluginLoadFailure>(known->second)));
  }
  kernels_.insert(kernels_.end(), extra.begin(), extra.end());
  for (auto& k : kernels_) k->set_timing(config.timing);
  token_probes_ = config.token_probes;
  sequence_seed_ = config.sequence_seed;
  if (!config.reference_cache.empty()) references_.emplace(config.reference_cache);
  if (!config.dispatch_table.empty()) dispatch_table_ = read_table_set(split_table_paths({config.dispatch_table}));
}

std::optional<CaseRecord> unloadable_plugin_record(const CaseSpec& c, const KernelUnderTest& k) {
  const auto* u = dynamic_cast<const UnloadablePlugin*>(&k);
  if (!u) return std::nullopt;
  CaseRecord r;
  r.id = c.id;
  r.kernel = k.id();
  r.source = c.source;
  r.status = Status::error;
  r.failed_check = u->failure().hung ? Check::timeout : Check::crash;
  r.reason = to_string(r.failed_check) + ": plugin not loaded: " + u->problem() + "; its cases are not judged";
  r.details = "Fix: the library's load-time code (ELF constructors, static initializers, the libraries it pulls in) "
              "must return; load it alone (python3 -c 'import ctypes; ctypes.CDLL(\"" + u->path().string() +
              "\")') to see what it does.";
  return r;
}

std::map<std::string, PluginLoadFailure> CaseContext::plugin_load_failures() const {
  std::map<std::string, PluginLoadFailure> out;
  for (const auto& k : kernels_)
    if (const auto* u = dynamic_cast<const UnloadablePlugin*>(k.get())) out[u->spec()] = u->failure();
  return out;
}

const DeviceDetection& CaseContext::device() {
  if (!device_) device_ = detect_device();
  return *device_;
}

CaseResult CaseContext::execute(const CaseRequest& r) {
  if (r.case_index >= cases_.size() || r.kernel_index >= kernels_.size())
    throw_harness_error("case executor", fmt::format("request for case {} of {}, kernel {} of {}", r.case_index,
                                                     cases_.size(), r.kernel_index, kernels_.size()));
  CaseResult out;
  if (auto rec = unloadable_plugin_record(cases_[r.case_index], *kernels_[r.kernel_index])) {
    out.record = std::move(*rec);
    return out;
  }
  PipelineOptions opt;
  opt.device_requirement = requirement_;
  opt.seed = r.seed;
  opt.weights = &weights_;
  opt.references = references_ ? &*references_ : nullptr;
  opt.rerun_probe = r.rerun_probe;
  opt.linearity_probe = r.linearity_probe;
  opt.token_probes = token_probes_;
  opt.dispatch_table = dispatch_table_ ? &*dispatch_table_ : nullptr;
  if (r.corrupt_pristine) opt.after_kernel_hook = [](Checkpoint& p) { p.routed.w13.bytes()[0] ^= std::byte{0x01}; };
  if (r.capture) opt.capture = [&out](const std::vector<float>& ref, const std::vector<float>& o) { out.ref = ref; out.out = o; };
  const CaseSpec& c = cases_[r.case_index];
  SequenceState* seq = c.step ? &sequence_[r.kernel_index] : nullptr;
  if (seq) opt.dirty_output = &seq->output;
  out.record = execute_case(c, *kernels_[r.kernel_index], device(), opt);
  if (seq) {
    note_sequence_step(out.record, *c.step, seq->last_step);
    seq->last_step = c.step->index;
  }
  return out;
}

void note_sequence_step(CaseRecord& rec, const CaseSpec::SequenceStep& step, std::optional<std::size_t> previous) {
  const std::string where = fmt::format("call sequence: step {} of {} ({}{})", step.index, step.count, step.order,
                                        step.order == "shuffled" ? fmt::format(", seed {}", step.seed) : "");
  std::string kernel;
  if (previous && *previous + 1 == step.index) kernel = "on the kernel object of the step before";
  else if (previous) kernel = fmt::format("on the kernel object of step {} (the steps between were not run)", *previous);
  else if (step.index > 0)
    kernel = "on a FRESH kernel object: no earlier step ran on it in this process (filtered out, or its worker was "
             "restarted after a crash or a timeout), so its state and output buffer are not the previous step's";
  else kernel = "on a fresh kernel object (the first step)";
  rec.metrics["sequence_step"] = double(step.index);
  rec.metrics["sequence_fresh_kernel"] = previous ? 0.0 : 1.0;
  rec.details = "  " + where + ", " + kernel + "\n" + rec.details;
}

ExecStats CaseContext::stats() const {
  ExecStats s;
  if (references_) { s.reference_hits = references_->hits(); s.reference_misses = references_->misses(); }
  s.weight_disk_hits = weights_.disk_hits();
  s.weight_misses = weights_.misses();
  return s;
}

}  // namespace moe
