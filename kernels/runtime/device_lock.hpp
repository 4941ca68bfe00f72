// The device lock of a run whose cases are judged by several worker processes at once (`run --jobs N`,
// docs/reliability.md "Parallel workers"). A GPU kernel holds it, with a DeviceLockGuard, around all of its device
// work for one run() call: the uploads, the verdict launches, the downloads and the timed repeats, and the work
// buffers' lifetime; and around freeing the input copies it keeps between the runs of one case. So no two workers'
// GPU work ever overlaps: a kernel's device-event timing never shares the GPU with another case's launches or copies.
// The GPU time of a case is a small part of its wall time (the rest, generation, references, clones and judging,
// runs on the CPU, in parallel), so the lock costs little.
//
// The lock itself is the supervisor's (harness/isolation/supervisor.hpp): a worker asks for it and waits for the
// grant over its pipes, and the supervisor does not count the wait against the case's time limit, so a hanging
// kernel that holds the lock costs its own case only. In a process with no hooks installed (one worker, in
// process, the unit tests) a guard does nothing. Plain C++ (no runtime header), so every build has it.
#pragma once
#include <functional>
#include <utility>

namespace moe {

struct DeviceLockHooks {
  std::function<void()> acquire, release;  // acquire blocks until the lock is held; release never throws
};

inline DeviceLockHooks& device_lock_hooks() {
  static DeviceLockHooks hooks;
  return hooks;
}

inline void install_device_lock(DeviceLockHooks hooks) { device_lock_hooks() = std::move(hooks); }

class DeviceLockGuard {
 public:
  DeviceLockGuard() {
    const DeviceLockHooks& h = device_lock_hooks();
    if (h.acquire) {
      h.acquire();
      held_ = true;
    }
  }
  ~DeviceLockGuard() {
    if (held_ && device_lock_hooks().release) device_lock_hooks().release();
  }
  DeviceLockGuard(const DeviceLockGuard&) = delete;
  DeviceLockGuard& operator=(const DeviceLockGuard&) = delete;

 private:
  bool held_ = false;
};

}  // namespace moe
