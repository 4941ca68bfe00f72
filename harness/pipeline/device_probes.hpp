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

// `out` is the judged output on `routing`; `failed_first` the record's failed check so far (nothing runs after a
// failure); `on`: the run's token-probe switch (`run --no-token-probes` turns these off too).
ProbeOutcome run_device_probes(const ProblemSpec& p, KernelUnderTest& kernel, const Checkpoint& working,
                               const RoutingResult& routing, const Tensor& out, Check failed_first, bool on);

}  // namespace moe
