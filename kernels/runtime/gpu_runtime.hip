#include <algorithm>
#include <vector>

#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/gpu_check.hpp"
#include "kernels/runtime/gpu_runtime.hpp"
#include "kernels/runtime/hip_compat.hpp"

namespace moe {

namespace {

// DeviceRuntime through the HIP API (the CUDA runtime through hip_compat.hpp on NVIDIA).
class HipDeviceRuntime final : public DeviceRuntime {
 public:
  std::string vendor() const override { return MOE_GPU_VENDOR; }
  RuntimeAnswer device_count(int& count) override {
    const hipError_t e = hipGetDeviceCount(&count);
    if (e == hipSuccess) return {};
    const bool none = e == hipErrorNoDevice || e == hipErrorInsufficientDriver;
    const std::string text = std::string("hipGetDeviceCount: ") + hipGetErrorString(e);
    (void)hipGetLastError();
    return {none ? RuntimeAnswer::Kind::no_device : RuntimeAnswer::Kind::failed, text};
  }
  RuntimeAnswer properties(int device, RuntimeProperties& out) override {
    hipDeviceProp_t p{};
    const hipError_t e = hipGetDeviceProperties(&p, device);
    if (e != hipSuccess) return {RuntimeAnswer::Kind::failed, std::string("hipGetDeviceProperties: ") + hipGetErrorString(e)};
    out.name = p.name;
#if defined(__HIP_PLATFORM_AMD__)
    out.arch_raw = p.gcnArchName;
#else
    out.arch_raw = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
#endif
    out.compute_units = p.multiProcessorCount;
    out.memory_bytes = p.totalGlobalMem;
    return {};
  }
  std::string driver_version() override {
    int v = 0;
    (void)hipDriverGetVersion(&v);
    return std::to_string(v);
  }
  std::string runtime_version() override {
    int v = 0;
    (void)hipRuntimeGetVersion(&v);
    return std::to_string(v);
  }
};

}  // namespace

DeviceDetection detect_device() {
  HipDeviceRuntime rt;
  return detect_device(rt);
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
