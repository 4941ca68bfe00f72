// The seam between the runner and the judging of one (case, kernel): the test body of every GoogleTest test (and
// selftest and calibrate) hands a CaseRequest to a CaseExecutor and gets the record back.
//  - in process (`--no-isolation`, and for kernels no worker can rebuild, e.g. `judge`'s external output): the
//    pipeline runs here (harness/pipeline/case_pipeline.cpp), for a debugger;
//  - isolated (the default): in a worker process, the harness binary itself in worker mode, under a supervisor that
//    waits with a watchdog (time limit and memory limit per case). A worker that dies (signal, abort, exit, a sticky
//    GPU error) or runs past a limit costs that one case, recorded as an error (failed_check crash, timeout or
//    out_of_memory); the next case gets a new worker (harness/isolation/supervisor.hpp). With jobs > 1, that many
//    workers judge queued requests at once (`run --jobs N`, docs/reliability.md "Parallel workers").
// Requests are submitted (queued) and waited for by ticket; each record exists the moment its case ends, in
// completion order (the completion callback: the run journal), while the caller collects them in its own order.
// Both build the same suites and kernels from the same ExecConfig (harness/isolation/case_context.hpp), so a case
// gets the same record either way.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/case/case_spec.hpp"
#include "harness/run/gating.hpp"
#include "kernels/gpu/dispatch_options.hpp"
#include "kernels/kernel_under_test.hpp"
#include "kernels/plugin/plugin_probe.hpp"
#include "reports/run_report.hpp"

namespace moe {

// What a worker needs to rebuild the run's cases and kernels by itself.
struct ExecConfig {
  std::vector<std::string> suite_files;  // loaded in order; their cases concatenated (selftest takes two)
  std::vector<std::string> kernel_ids;   // built by make_kernel_by_id, in this order (mutants: "host-contract~M")
  std::vector<std::string> plugins;      // then these plugin libraries, by path
  // Plugins (by their `plugins` spelling) whose loading failed in the supervisor's probe: the workers build their
  // UnloadablePlugin without loading or probing them again (kernels/plugin/unloadable_plugin.hpp).
  std::map<std::string, PluginLoadFailure> plugin_load_failures;
  double host_budget = 0;                // 0: the host kernel's default
  gpu::DispatchOptions dispatch;         // the GPU kernels' A/B switches (--dispatch)
  bool timing = true;
  bool token_probes = true;              // harness/pipeline/token_probes.hpp after every passing case
  std::optional<std::uint64_t> sequence_seed;  // `run --sequence-seed`: replaces a call sequence's seed
  std::string reference_cache;           // on-disk references and weights; empty: none
  DeviceRequirement device;
  std::string dispatch_table;            // `run --dispatch-table`: the set's absolute paths, ':'-separated; "": none
  bool device_lock = false;              // workers share the device: GPU kernels take the supervisor's lock
};

struct CaseRequest {
  std::size_t case_index = 0, kernel_index = 0;  // into CaseExecutor::cases() and kernels()
  std::optional<std::uint64_t> seed;             // overrides the case's seed
  bool rerun_probe = true, linearity_probe = true;
  bool capture = false;           // return the contract reference and the kernel's output (selftest)
  bool corrupt_pristine = false;  // flip one bit of the pristine w13 after the kernel ran (selftest's harness probe)
};

struct CaseResult {
  CaseRecord record;
  std::vector<float> ref, out;  // with capture, for a judged case
  double seconds = 0;           // from the request's start to its record
};

struct IsolationOptions {
  bool isolated = true;
  std::optional<double> case_timeout_s;  // --case-timeout: beats the case's timeout_s and the default
  int jobs = 1;                          // worker processes at once (isolated only)
  int threads = 0;                       // each worker's OMP_NUM_THREADS; 0: the environment's
};

// Cumulative cache counters of every process that judged cases (printed under the run's table).
struct ExecStats {
  std::size_t reference_hits = 0, reference_misses = 0, weight_disk_hits = 0, weight_misses = 0;
};

class CaseContext;
class Supervisor;

class CaseExecutor {
 public:
  // Loads the suites and builds the kernels here too (for ids, versions and the test registry); `extra` kernels
  // (built by the caller) cannot be rebuilt by a worker, so with any of them every case runs in process.
  CaseExecutor(const ExecConfig& config, const IsolationOptions& iso,
               std::vector<std::shared_ptr<KernelUnderTest>> extra = {});
  ~CaseExecutor();
  const std::vector<CaseSpec>& cases() const;
  std::vector<KernelUnderTest*> kernels() const;
  // The live device, as the process that judges the cases sees it (isolated: the worker's detection; the
  // supervisor itself never initializes a GPU runtime).
  const DeviceDetection& device();
  using Ticket = std::size_t;
  using Completion = std::function<void(Ticket, const CaseResult&)>;
  Ticket submit(const CaseRequest& r);
  // The result of `t` (judging what is queued before it meanwhile); nullopt when `t` was dropped by hold_back
  // before it started, or abandoned in flight by it (isolated: its worker is killed kStopGraceSeconds after
  // hold_back first said true, harness/isolation/stop_signal.hpp). Each ticket is waited for once.
  std::optional<CaseResult> wait(Ticket t);
  bool started(Ticket t) const;  // in flight or done (so wait() returns a result)
  // Called once per result, the moment it exists, in completion order.
  void set_completion(Completion f);
  // While it returns true no queued request starts and the queued ones are dropped; isolated, the requests in
  // flight are abandoned kStopGraceSeconds after it first said true.
  void set_hold_back(std::function<bool()> f);
  // The requests abandoned in flight so far, as "KERNEL CASE".
  std::vector<std::string> abandoned() const;
  CaseResult execute(const CaseRequest& r);  // submit and wait
  ExecStats stats() const;
  bool isolated() const { return supervisor_ != nullptr; }
  std::size_t jobs() const;  // worker processes at once (1 in process)

 private:
  std::unique_ptr<CaseContext> context_;
  std::unique_ptr<Supervisor> supervisor_;
  // In process: the requests queued until they are waited for, in that order.
  std::map<Ticket, CaseRequest> queued_;
  Ticket next_ticket_ = 0;
  Completion completion_;
  std::function<bool()> hold_back_;
};

}  // namespace moe
