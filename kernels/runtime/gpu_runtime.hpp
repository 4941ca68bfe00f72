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

// Device-event timing of `fn` (which enqueues work on the default stream): `warmup` untimed runs, then the median
// of `repeats` timed runs, in microseconds.
double time_median_us(void (*fn)(void*), void* ctx, int warmup, int repeats);
void synchronize();

}  // namespace moe::gpu
