// The interface every implementation under test provides (docs/adding-a-kernel.md): GPU kernels, the host
// contract kernel, mutants of both, plugins.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/error.hpp"
#include "fixtures/problem.hpp"
#include "fixtures/rounding_contract.hpp"
#include "fixtures/tensor.hpp"
#include "kernels/runtime/device_info.hpp"
#include "reference/routing/routing.hpp"

namespace moe {

struct Support {
  bool supported = true;
  std::string reason;  // why not, in words a user can act on
  // Declined for want of a device this build can drive (a device plugin in a build without a GPU runtime): a skip,
  // but a gating failure under --require-device, like a missing device (docs/reliability.md "Gating").
  bool no_device = false;
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
  static Support no_device_here(std::string why) { return {false, std::move(why), true}; }
};

struct RunInfo {
  std::string variant;        // which implementation path actually ran (dispatch is part of the verdict)
  double median_us = 0.0;     // device-event timing where the kernel measures it; 0 when not timed
  int timed_repeats = 0;
  double achieved_tbps = 0.0, achieved_tflops = 0.0;
  double upload_s = 0.0;  // seconds of run() spent copying inputs to the device (report phase `upload`); 0 on the host
};

// One case's run as device work the harness drives itself (the device probes, docs/judging.md "Streams and graph
// replay"): the kernel's device buffers stay allocated for the object's lifetime, its whole run can be enqueued on a
// stream the harness gives (and captured into a graph), and new input values can be written into the same buffers.
// GPU kernels only; its calls need the device lock the pipeline holds through the case (kernels/runtime/device_lock.hpp).
class DeviceRun {
 public:
  virtual ~DeviceRun() = default;
  // The run's work (clearing its work buffers, every launch) enqueued on `stream` (a cudaStream_t / hipStream_t),
  // without synchronizing, allocating or copying from the host: it must be capturable into a graph.
  virtual void enqueue(void* stream) = 0;
  // New values of x and of the routing's ids and weights (the shapes the run was made for) written into the buffers
  // enqueue() reads, synchronously, outside any capture.
  virtual void write_inputs(const Tensor& x, const RoutingResult& routing) = 0;
  // The output's device buffer: [T, H] in the output dtype, what enqueue() writes.
  virtual void* output() const = 0;
  // The red zones of the buffers this run owns (kernels/runtime/gpu_runtime.hpp GuardedBuffer), checked now: one text
  // per changed guard, naming the buffer, the side and the first offset; the changed bytes added to `bytes`. Call it
  // after the run's work was waited for, outside any capture. Default: no guarded buffers.
  virtual std::vector<std::string> red_zone_violations(std::int64_t& bytes) { return {}; }
};

class KernelUnderTest {
 public:
  virtual ~KernelUnderTest() = default;
  virtual std::string id() const = 0;
  virtual std::string version() const = 0;
  virtual bool needs_device() const = 0;
  virtual Support supports(const ProblemSpec& p, const DeviceInfo* device) const = 0;
  // May convert, shuffle or interleave IN PLACE: `working` is always the harness's clone, never the pristine tensors.
  virtual void prepare(const ProblemSpec& p, Checkpoint& working) = 0;
  // `out` [T, H] in the output dtype, pre-filled with a NaN sentinel. Judged on `routing` (the reference's ids and
  // weights), so routing differences never blur a GEMM verdict.
  virtual RunInfo run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing, Tensor& out) = 0;
  // The rounding points this kernel fixes for p (fixtures/rounding_contract.hpp, docs/adding-a-kernel.md): where it
  // rounds and to what, whatever the case says; the case decides every point it does not name, and a case that pins
  // its contract decides them all (docs/judging.md "The rounding contract"). Default: none, the case's contract.
  virtual RoundingContract rounding_contract(const ProblemSpec& p) const { return {}; }
  // Whether two runs on the same inputs must agree bit for bit (a fused-atomic float reduce need not).
  virtual bool deterministic(const ProblemSpec& p) const { return true; }
  // Whether run() can be called again to probe for unwritten elements and non-determinism (an output read back
  // from a file cannot).
  virtual bool rerunnable() const { return true; }
  // Whether run() reads the checkpoint it is handed. False for a kernel that takes the working clone in prepare()
  // and reads its own copy since (a Python kernel): the token probes, which hand run() another checkpoint (padded,
  // guarded, permuted), cannot run on it.
  virtual bool reads_given_checkpoint() const { return true; }
  // Whether the token probes may compare this kernel's rows bit for bit across batch layouts (tokens rotated, experts
  // relabeled): a deterministic kernel whose arithmetic for a row does not depend on where the row sits. False for a
  // kernel that computes through a BLAS (NumPy, torch), whose blocking may depend on it: it gets the row bound of a
  // non-deterministic kernel, with the padding and poisoned rows alone (harness/pipeline/token_probes.hpp).
  virtual bool rows_exact_across_layouts(const ProblemSpec& p) const { return deterministic(p); }
  // Whether run() reads the expert weights from the checkpoint it is handed on every call. False for a kernel that
  // may keep weights it converted in prepare() (a Python kernel): relabeling experts in the checkpoint would not reach
  // it, so the expert_relabeling probe does not run on it.
  virtual bool rereads_expert_weights() const { return reads_given_checkpoint(); }
  // Whether run() measures its speed (warm-ups and timed repeats) after the verdict run. Off for runs that only
  // want verdicts, e.g. a bisect step (`run --no-timing`); kernels that do not time themselves ignore it.
  virtual void set_timing(bool on) {}
  // The harness is done with the case the last run() calls were for (after its probes, or when the case threw): a
  // kernel that keeps device copies of the working checkpoint across those calls frees them here. Every caller of
  // run() calls it before the working checkpoint goes away (EndCase below does on every path).
  virtual void end_case() {}
  // The dispatch variants the kernel offers for p (`moe-harness tune`, docs/tuning.md), each as the option text
  // select_dispatch() takes; "" is the kernel's own rules, always first. A kernel with one path offers only "".
  virtual std::vector<std::string> dispatch_variants(const ProblemSpec& p) const { return {""}; }
  // Runs from now on with `choice` (one of dispatch_variants(), or a tuned table's text; "": the kernel's own rules).
  // An unknown choice is bad input naming it.
  virtual void select_dispatch(const std::string& choice) {
    if (!choice.empty())
      throw_bad_input("dispatch table", "dispatch", "kernel " + id() + " has no dispatch choice '" + choice + "'",
                      "tune the table for this kernel (moe-harness tune --kernel " + id() + ")");
  }
  // The case's run as device work the harness drives (DeviceRun above), for inputs of the shapes of p, or null with
  // `why_not` said (a host kernel, a path that sums on the host): the device probes then say not run, with that.
  virtual std::unique_ptr<DeviceRun> device_run(const ProblemSpec& p, const Checkpoint& working,
                                                const RoutingResult& routing, std::string& why_not) {
    why_not = "the kernel runs no device work the harness can drive (a host or external kernel)";
    return nullptr;
  }
  // The device red zones (docs/judging.md "Token probes", red_zones): what the runs since the last end_case() wrote
  // into the guards around the device buffers the kernel was handed or allocated (GPU kernels, device plugins), one
  // text per buffer and side ("device out: 4 byte(s) after the end changed, first at +0"), the changed bytes added
  // to `bytes`. Default: none (a kernel without guarded device buffers).
  virtual std::vector<std::string> device_red_zone_violations(std::int64_t& bytes) const { return {}; }
  // Checks of where the kernel's inputs came from that only it can answer, as (check, "ran" | "not run: <why>") for
  // the report's probes: an output computed elsewhere says whether its fixture fingerprint was compared.
  virtual std::vector<std::pair<std::string, std::string>> input_checks() const { return {}; }
};

// Calls kernel.end_case() when the scope of one case's run() calls ends, however it ends.
class EndCase {
 public:
  explicit EndCase(KernelUnderTest& k) : k_(k) {}
  ~EndCase() { k_.end_case(); }
  EndCase(const EndCase&) = delete;
  EndCase& operator=(const EndCase&) = delete;

 private:
  KernelUnderTest& k_;
};

}  // namespace moe
