// Host-side GPU helpers with plain C++ types (no runtime header), so adapters compile with the host compiler.
// Implemented in gpu_runtime.hip; present only in GPU builds (MOE_HAVE_GPU_RUNTIME).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace moe::gpu {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; o.n_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  std::size_t bytes() const { return n_; }
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;
  void zero();
  // The same, enqueued on `stream` (nullptr: the legacy default stream); the host side waits only for the copy out.
  void download_on(void* stream, void* host, std::size_t bytes) const;
  void upload_on(void* stream, const void* host, std::size_t bytes);  // `host` pinned (HostPinned) when captured
  void zero_on(void* stream);

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

// A device buffer the harness hands a kernel, inside one allocation [guard][bytes][guard] whose guards
// (kRedZoneBytes each, kernels/runtime/red_zone.hpp) hold a known pattern: a kernel writing out of bounds changes
// them. get() is the inner buffer; the copies and clears act on it alone. A buffer of 0 bytes allocates nothing.
class GuardedBuffer {
 public:
  GuardedBuffer() = default;
  // `name` names the buffer in a violation ("device out").
  GuardedBuffer(std::size_t bytes, std::string name);
  GuardedBuffer(GuardedBuffer&& o) noexcept
      : whole_(std::move(o.whole_)), n_(std::exchange(o.n_, 0)), name_(std::move(o.name_)) {}
  GuardedBuffer& operator=(GuardedBuffer&& o) noexcept {
    whole_ = std::move(o.whole_);
    n_ = std::exchange(o.n_, 0);
    name_ = std::move(o.name_);
    return *this;
  }
  void* get() const { return whole_.get() ? static_cast<char*>(whole_.get()) + kGuard : nullptr; }
  std::size_t bytes() const { return n_; }
  const std::string& name() const { return name_; }
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;
  void zero();
  void upload_on(void* stream, const void* host, std::size_t bytes);  // `host` pinned (HostPinned) when captured
  void zero_on(void* stream);
  // Downloads both guards (synchronously: call it after the kernel's work was waited for, outside any capture) and
  // appends one violation per changed side to `violations` (red_zone_violation()'s text), adding the changed bytes
  // to `bytes`. A changed guard is filled again, so the next check reports only writes made after this one.
  void check(std::vector<std::string>& violations, std::int64_t& bytes);

 private:
  static constexpr std::size_t kGuard = 256;  // kRedZoneBytes (red_zone.hpp; static_assert in gpu_runtime.hip)
  void fill_guards();
  void fits(std::size_t bytes) const;  // throws when `bytes` exceeds the buffer
  DeviceBuffer whole_;
  std::size_t n_ = 0;
  std::string name_;
};

// Page-locked host memory (a copy from it can be captured into a graph, which replays it from the same address).
class HostPinned {
 public:
  explicit HostPinned(std::size_t bytes);
  ~HostPinned();
  HostPinned(const HostPinned&) = delete;
  HostPinned& operator=(const HostPinned&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

// Synchronous copies to and from a device address the caller holds (another object's buffer).
void copy_to_device(void* device, const void* host, std::size_t bytes);
void copy_from_device_on(void* stream, void* host, const void* device, std::size_t bytes);

// A stream of the current device (what a device-memory plugin enqueues on): created on construction, destroyed
// with the object; get() is the runtime's cudaStream_t / hipStream_t. A non-blocking stream does not synchronize
// with the legacy default stream (the device probes' stream: work a kernel wrongly puts there is not waited for).
class Stream {
 public:
  explicit Stream(bool non_blocking = false);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void* get() const { return s_; }
  void synchronize() const;

 private:
  void* s_ = nullptr;
};

// The stream the kernels' launchers (kernels/moe/) enqueue on: nullptr, the legacy default stream, unless a
// LaunchStreamScope is alive (the device probes drive a kernel's launches on a stream of their own).
void* launch_stream();
class LaunchStreamScope {
 public:
  explicit LaunchStreamScope(void* stream);
  ~LaunchStreamScope();
  LaunchStreamScope(const LaunchStreamScope&) = delete;
  LaunchStreamScope& operator=(const LaunchStreamScope&) = delete;

 private:
  void* previous_;
};

// The work fn(ctx) enqueues on `stream`, captured into a graph (relaxed mode, so a call the capture cannot hold, such
// as a launch on the legacy default stream, runs at once instead of failing the capture) and instantiated. A throw
// from fn ends the capture first. launch() replays it on a stream.
class Graph {
 public:
  Graph(const Stream& stream, void (*fn)(void*), void* ctx);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  void launch(const Stream& stream) const;

 private:
  void* graph_ = nullptr;
  void* exec_ = nullptr;
};

// Holds the legacy default stream busy until release(): one GPU thread spins on a host-mapped flag, so work enqueued
// there (instead of on the stream a kernel was given) waits behind it, deterministically, while other streams run.
// The spin ends by itself after about 2^32 clock cycles (a second or two), so a gate never released cannot hang
// the device. Nothing synchronous on the legacy stream (hipMemcpy, hipDeviceSynchronize) may run while it is held.
class LegacyStreamGate {
 public:
  LegacyStreamGate();
  ~LegacyStreamGate();  // releases and waits for the gate's kernel
  LegacyStreamGate(const LegacyStreamGate&) = delete;
  LegacyStreamGate& operator=(const LegacyStreamGate&) = delete;
  void release();

 private:
  int* flag_ = nullptr;  // host-mapped
  bool released_ = false;
};

// Device-event timing of `fn` (which enqueues work on the default stream): `warmup` untimed runs, then the median
// of `repeats` timed runs, in microseconds.
double time_median_us(void (*fn)(void*), void* ctx, int warmup, int repeats);
// The same with the events recorded on `stream` (nullptr: the default stream), which `fn` enqueues its work on.
double time_median_us_on(void* stream, void (*fn)(void*), void* ctx, int warmup, int repeats);
void synchronize();
// The ordinal of the current device.
int current_device();
// Throws (gpu_check.hpp) if the runtime holds an error from a launch; `what` names the launch in the message.
void check_last_error(const char* what);

}  // namespace moe::gpu
