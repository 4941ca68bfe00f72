// How the harness runs a device-memory plugin (moe_plugin.h version 2, memory MOE_MEMORY_DEVICE): the case's working
// tensors uploaded once and kept on the device for every run() of that case (the verdict run, the timed repeats,
// the probes' reruns) until end_case(); the routing uploaded for each run (the probes change the weights); the
// output a device buffer pre-filled with the host output's sentinel; the plugin's work on a stream of its own,
// synchronized and checked after each call; only run_device() timed, with device events on that stream (two
// warm-ups, the median of five), on the case's first run. The device lock (kernels/runtime/device_lock.hpp) is held
// from the case's first upload until end_case(), so another worker's GPU work never overlaps it and the device memory
// in use is one case's. Every buffer run_device() is handed (each working tensor, ids, weights, the output; those of
// device_run() too) is a gpu::GuardedBuffer, its guards checked after each synchronized run: what a plugin wrote
// out of bounds is kept, per case, for the red_zones probe (red_zone_violations()). GPU builds only
// (MOE_HAVE_GPU_RUNTIME).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "kernels/kernel_under_test.hpp"
#include "kernels/plugin/moe_plugin.h"

namespace moe {

class PluginDeviceRunner {
 public:
  // api: the plugin's table (memory MOE_MEMORY_DEVICE, run_device set); where: the plugin, for error messages.
  PluginDeviceRunner(const moe_plugin_api* api, std::string where);
  ~PluginDeviceRunner();
  // `out` holds the sentinel the harness pre-filled; on return the plugin's output. RunInfo::variant is the plugin's.
  RunInfo run(const moe_problem& m, const Checkpoint& working, const RoutingResult& routing, Tensor& out, bool timing);
  // The case's run as device work the harness drives (kernels/kernel_under_test.hpp DeviceRun; the device probes):
  // the plugin's run_device() on the stream given, over the case's device copies of `working` (those of its last
  // run(), or uploaded now if they are another checkpoint's) with x, the routing and the output in buffers of the
  // DeviceRun's own. Null with why_not when the checkpoint has no x.
  std::unique_ptr<DeviceRun> device_run(const moe_problem& m, const Checkpoint& working, const RoutingResult& routing,
                                        DType out_dtype, std::string& why_not);
  // The guard violations of the runs since the last end_case(), one text per buffer and side; their changed bytes
  // added to `bytes`.
  std::vector<std::string> red_zone_violations(std::int64_t& bytes) const {
    bytes += violation_bytes_;
    return violations_;
  }
  // Frees the case's device copies, releases the device lock and forgets the case's guard violations.
  void end_case();
  // How many times the working tensors were uploaded (once per case; the tests count them).
  std::size_t uploads() const { return uploads_; }

 private:
  struct Case;
  struct Streams;
  // The device copies of `working`: the ones held, or new ones (the old freed first; counted in uploads()).
  Case& case_for(const Checkpoint& working);
  const moe_plugin_api* api_;
  std::string where_;
  std::unique_ptr<Case> case_;
  std::unique_ptr<Streams> stream_;  // created on the first run
  std::size_t uploads_ = 0;
  std::vector<std::string> violations_;
  std::int64_t violation_bytes_ = 0;
};

}  // namespace moe
