// Device probes (docs/judging.md "Streams and graph replay"): what a GPU kernel does when the harness drives its
// device work itself, as serving engines do, checked after the token probes on a kernel that offers a DeviceRun
// (kernels/kernel_under_test.hpp):
//   stream_order   the run enqueued on a non-blocking stream the harness created, with the legacy default stream
//                  held busy (gpu::LegacyStreamGate) and the output read back on the harness's stream only after
//                  its work: a kernel that launches on the default stream instead leaves the output unwritten;
//   graph_replay   the run captured into a graph, then replayed with new inputs written into the same buffers (the
//                  tokens rotated by one position, with their routing), then with the case's own again: each
//                  replay's output must be the judged output (rotated for the first) bit for bit, or on a kernel
//                  that declares itself non-deterministic within 1e-2 of each row's norm and finite where it is.
// Both compare against the judged run, so they need no reference of their own.
#pragma once
#include "harness/pipeline/probes.hpp"

namespace moe {

// A kernel whose device work goes through a framework the harness does not drive itself (a Python kernel's: torch's
// streams and CUDA graphs, harness/python/native/python_kernel.hpp) runs the probes' device work on its side and
// hands each output back; the inputs of the replays, the comparisons, the checks and their messages stay here, the
// same as for a DeviceRun. A KernelUnderTest that also derives from it is driven this way. Every output handed in
// holds the sentinel, in the output's dtype and shape; the driver writes the device output there.
class DrivenDeviceProbes {
 public:
  virtual ~DrivenDeviceProbes() = default;
  // Takes the device copies of the case (the working checkpoint with `routing`) that both probes run on: "" when
  // they can run, else why not (no CUDA device for the framework): then neither runs, with that reason.
  virtual std::string begin_device_probes(const ProblemSpec& p, const Checkpoint& working,
                                          const RoutingResult& routing) = 0;
  // Why graph_replay does not run on this kernel (it declares itself not graph-safe), or "".
  virtual std::string graph_replay_declined() const = 0;
  // One run on a stream the driver created, the default stream held busy until the output was read back on that
  // stream only, into `out`.
  virtual void stream_order_run(Tensor& out) = 0;
  // One run captured into a graph on that stream: "" or the framework's words when it could not be captured.
  virtual std::string capture_graph() = 0;
  // x and the routing written into the storage the capture read, the device output reset to `out`'s sentinel, the
  // graph replayed and its output read back into `out`.
  virtual void replay_graph(const Tensor& x, const RoutingResult& routing, Tensor& out) = 0;
  // Drops the device copies and the graph.
  virtual void end_device_probes() = 0;
};

// `out` is the judged output on `routing`; `failed_first` the record's failed check so far (nothing runs after a
// failure); `on`: the run's token-probe switch (`run --no-token-probes` turns these off too).
ProbeOutcome run_device_probes(const ProblemSpec& p, KernelUnderTest& kernel, const Checkpoint& working,
                               const RoutingResult& routing, const Tensor& out, Check failed_first, bool on);

}  // namespace moe
