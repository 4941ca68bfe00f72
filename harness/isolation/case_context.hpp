// What judging a case needs, built once per process from an ExecConfig: the suites' cases, the kernels, the device
// detection, the weight cache (kept across cases) and the reference cache. The worker process and the in-process
// executor run every case through here, so both give the same record.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <optional>
#include <vector>

#include "harness/isolation/executor.hpp"
#include "harness/pipeline/reference_cache.hpp"
#include "harness/tuning/table_set.hpp"
#include "harness/pipeline/weight_cache.hpp"

namespace moe {

// The record of case `c` for a plugin that could not be loaded (kernels/plugin/unloadable_plugin.hpp): status
// error, failed_check crash (its loading exited or died of a signal) or timeout (it hung), the library and what
// loading it did in the reason; nothing of the case was built. Null when `k` is no such plugin.
std::optional<CaseRecord> unloadable_plugin_record(const CaseSpec& c, const KernelUnderTest& k);

class CaseContext {
 public:
  // Bad input (an unknown kernel, a plugin that does not load, a malformed suite) throws moe::Error. Two kernels
  // may share an id here (selftest's clean kernel and its liveness baseline); `run` refuses that itself.
  CaseContext(const ExecConfig& config, std::vector<std::shared_ptr<KernelUnderTest>> extra = {});
  const std::vector<CaseSpec>& cases() const { return cases_; }
  const std::vector<std::shared_ptr<KernelUnderTest>>& kernels() const { return kernels_; }
  const DeviceDetection& device();  // detected on first use
  // Never throws for a case (case_pipeline.cpp); a request outside the suite is a harness error.
  CaseResult execute(const CaseRequest& r);
  ExecStats stats() const;
  // Bytes of generated weights the weight cache holds now (the supervisor's memory limit counts them).
  std::size_t cached_weight_bytes() const { return weights_.bytes(); }
  // The plugins whose loading failed (their kernels are UnloadablePlugins), by their ExecConfig spelling.
  std::map<std::string, PluginLoadFailure> plugin_load_failures() const;

 private:
  std::vector<CaseSpec> cases_;
  std::vector<std::shared_ptr<KernelUnderTest>> kernels_;
  std::optional<DeviceDetection> device_;
  DeviceRequirement requirement_;
  bool token_probes_ = true;
  WeightCache weights_;
  std::optional<ReferenceCache> references_;
  std::optional<TableSet> dispatch_table_;
  // Per kernel object (by kernel index), for call sequences: the step that last ran on it in this process and its
  // output bytes, which the next step's output is filled with (docs/judging.md "Call sequences").
  struct SequenceState {
    std::optional<std::size_t> last_step;
    std::vector<std::byte> output;
  };
  std::map<std::size_t, SequenceState> sequence_;
  std::optional<std::uint64_t> sequence_seed_;
};

// What a call sequence's step record says about its place and its kernel object: the metrics sequence_step and
// sequence_fresh_kernel, and a line in front of the details. `previous`: the step that last ran on the same kernel
// object (none: a fresh one, because the steps before were filtered out or its worker was restarted).
void note_sequence_step(CaseRecord& rec, const CaseSpec::SequenceStep& step, std::optional<std::size_t> previous);

}  // namespace moe
