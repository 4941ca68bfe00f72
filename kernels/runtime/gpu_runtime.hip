#include <algorithm>
#include <vector>

#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/gpu_check.hpp"
#include "kernels/runtime/gpu_runtime.hpp"
#include "kernels/runtime/hip_compat.hpp"

namespace moe {

DeviceDetection detect_device() {
  DeviceDetection d;
  int count = 0;
  const hipError_t e = hipGetDeviceCount(&count);
  if (e == hipErrorNoDevice || e == hipErrorInsufficientDriver) {
    d.runtime_present = false;
    d.message = std::string("GPU runtime present but no usable device: ") + hipGetErrorString(e);
    (void)hipGetLastError();
    return d;
  }
  d.runtime_present = true;
  if (e != hipSuccess) {
    d.query_failed = true;
    d.message = std::string("hipGetDeviceCount failed: ") + hipGetErrorString(e);
    return d;
  }
  d.device_count = count;
  if (count == 0) {
    d.runtime_present = false;
    d.message = "GPU runtime present but it reports 0 devices";
    return d;
  }
  int dev = 0;
  hipDeviceProp_t p{};
  const hipError_t pe = hipGetDeviceProperties(&p, dev);
  if (pe != hipSuccess) {
    d.query_failed = true;
    d.message = std::string("hipGetDeviceProperties failed: ") + hipGetErrorString(pe);
    return d;
  }
  DeviceInfo info;
  info.vendor = MOE_GPU_VENDOR;
  info.name = p.name;
#if defined(__HIP_PLATFORM_AMD__)
  info.arch_raw = p.gcnArchName;
#else
  info.arch_raw = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
#endif
  info.arch = normalize_arch(info.arch_raw);
  info.compute_units = p.multiProcessorCount;
  info.memory_bytes = p.totalGlobalMem;
  int drv = 0, rt = 0;
  (void)hipDriverGetVersion(&drv);
  (void)hipRuntimeGetVersion(&rt);
  info.driver_version = std::to_string(drv);
  info.runtime_version = std::to_string(rt);
  if (info.arch.empty()) {
    d.query_failed = true;
    d.message = "the runtime reported an empty architecture for device 0";
  }
  d.device = info;
  d.message = info.name + " (" + info.arch + ")";
  return d;
}

namespace gpu {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : n_(bytes) {
  if (bytes) MOE_GPU_CHECK(hipMalloc(&p_, bytes));
}
DeviceBuffer::~DeviceBuffer() {
  if (p_) (void)hipFree(p_);
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) (void)hipFree(p_);
    p_ = o.p_; n_ = o.n_;
    o.p_ = nullptr; o.n_ = 0;
  }
  return *this;
}
void DeviceBuffer::upload(const void* host, std::size_t bytes) {
  if (bytes) MOE_GPU_CHECK(hipMemcpy(p_, host, bytes, hipMemcpyHostToDevice));
}
void DeviceBuffer::download(void* host, std::size_t bytes) const {
  if (bytes) MOE_GPU_CHECK(hipMemcpy(host, p_, bytes, hipMemcpyDeviceToHost));
}
void DeviceBuffer::zero() {
  if (n_) MOE_GPU_CHECK(hipMemset(p_, 0, n_));
}

void synchronize() { MOE_GPU_CHECK(hipDeviceSynchronize()); }

Stream::Stream() {
  hipStream_t s = nullptr;
  MOE_GPU_CHECK(hipStreamCreate(&s));
  s_ = s;
}
Stream::~Stream() {
  if (s_) (void)hipStreamDestroy(static_cast<hipStream_t>(s_));
}
void Stream::synchronize() const { MOE_GPU_CHECK(hipStreamSynchronize(static_cast<hipStream_t>(s_))); }

int current_device() {
  int d = 0;
  MOE_GPU_CHECK(hipGetDevice(&d));
  return d;
}

void check_last_error(const char* what) { MOE_GPU_CHECK_LAUNCH(what); }

double time_median_us(void (*fn)(void*), void* ctx, int warmup, int repeats) {
  return time_median_us_on(nullptr, fn, ctx, warmup, repeats);
}

double time_median_us_on(void* stream_ptr, void (*fn)(void*), void* ctx, int warmup, int repeats) {
  const auto stream = static_cast<hipStream_t>(stream_ptr);
  for (int i = 0; i < warmup; ++i) fn(ctx);
  MOE_GPU_CHECK(hipDeviceSynchronize());
  hipEvent_t a, b;
  MOE_GPU_CHECK(hipEventCreate(&a));
  MOE_GPU_CHECK(hipEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < repeats; ++i) {
    MOE_GPU_CHECK(hipEventRecord(a, stream));
    fn(ctx);
    MOE_GPU_CHECK(hipEventRecord(b, stream));
    MOE_GPU_CHECK(hipEventSynchronize(b));
    float t = 0;
    MOE_GPU_CHECK(hipEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  (void)hipEventDestroy(a);
  (void)hipEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return repeats ? double(ms[ms.size() / 2]) * 1000.0 : 0.0;
}

}  // namespace gpu
}  // namespace moe
