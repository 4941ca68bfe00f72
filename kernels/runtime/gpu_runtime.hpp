// Host-side GPU helpers with plain C++ types (no runtime header), so adapters compile with the host compiler.
// Implemented in gpu_runtime.hip; present only in GPU builds (MOE_HAVE_GPU_RUNTIME).
#pragma once
#include <cstddef>
#include <cstdint>

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

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

// A stream of the current device (what a device-memory plugin enqueues on): created on construction, destroyed
// with the object; get() is the runtime's cudaStream_t / hipStream_t.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void* get() const { return s_; }
  void synchronize() const;

 private:
  void* s_ = nullptr;
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
