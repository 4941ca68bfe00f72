// The worker side of isolation: `moe-harness __worker` (started by the supervisor, never by a user) reads its
// ExecConfig and then one CaseRequest per line on fd 3, builds the suites and kernels once (a CaseContext: the
// weight cache lives as long as the worker), and writes one record per request on fd 4 (wire.hpp). After a case
// that left the GPU context unusable (a sticky device error: every later call would fail too) it sends that
// case's record, marked crash, and exits, so that the supervisor starts a fresh process for the next case.
#pragma once
#include "harness/isolation/wire.hpp"
#include "kernels/runtime/device_lock.hpp"

namespace moe {

inline constexpr const char* kWorkerArg = "__worker";
inline constexpr int kWorkerRequestFd = 3, kWorkerRecordFd = 4;

// The worker's main loop; returns the process exit status (0 at the end of the requests).
int run_worker(int request_fd, int record_fd);

// The device lock through the supervisor (wire.hpp, kernels/runtime/device_lock.hpp): acquire sends the request on
// record_fd and blocks until the grant arrives on `in`; release sends the release. A supervisor gone (end of file
// on the request pipe) leaves nothing to judge for: the worker ends.
DeviceLockHooks supervisor_device_lock(wire::LineReader& in, int record_fd);

}  // namespace moe
