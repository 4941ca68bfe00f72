#include <algorithm>
#include <utility>
#include <vector>

#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/gpu_check.hpp"
#include "kernels/runtime/gpu_runtime.hpp"
#include "kernels/runtime/hip_compat.hpp"
#include "kernels/runtime/red_zone.hpp"

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
void DeviceBuffer::download_on(void* stream, void* host, std::size_t bytes) const {
  if (bytes) MOE_GPU_CHECK(hipMemcpyAsync(host, p_, bytes, hipMemcpyDeviceToHost, static_cast<hipStream_t>(stream)));
}
void DeviceBuffer::upload_on(void* stream, const void* host, std::size_t bytes) {
  if (bytes) MOE_GPU_CHECK(hipMemcpyAsync(p_, host, bytes, hipMemcpyHostToDevice, static_cast<hipStream_t>(stream)));
}
GuardedBuffer::GuardedBuffer(std::size_t bytes, std::string name)
    : whole_(bytes ? bytes + 2 * kGuard : 0), n_(bytes), name_(std::move(name)) {
  static_assert(kGuard == kRedZoneBytes, "the guards are what red_zone.hpp compares");
  if (bytes) fill_guards();
}
void GuardedBuffer::fill_guards() {
  const std::vector<std::uint8_t> pattern = red_zone_pattern();
  auto* base = static_cast<char*>(whole_.get());
  copy_to_device(base, pattern.data(), kGuard);
  copy_to_device(base + kGuard + n_, pattern.data(), kGuard);
}
// A copy larger than the buffer would land in its guard and be blamed on the kernel: a harness error instead.
void GuardedBuffer::fits(std::size_t bytes) const {
  if (bytes > n_)
    throw_harness_error("gpu::GuardedBuffer", name_ + ": a copy of " + std::to_string(bytes) + " bytes into a buffer of " +
                                                  std::to_string(n_));
}
void GuardedBuffer::upload(const void* host, std::size_t bytes) {
  fits(bytes);
  copy_to_device(get(), host, bytes);
}
void GuardedBuffer::download(void* host, std::size_t bytes) const {
  fits(bytes);
  if (bytes) MOE_GPU_CHECK(hipMemcpy(host, get(), bytes, hipMemcpyDeviceToHost));
}
void GuardedBuffer::zero() {
  if (n_) MOE_GPU_CHECK(hipMemset(get(), 0, n_));
}
void GuardedBuffer::upload_on(void* stream, const void* host, std::size_t bytes) {
  fits(bytes);
  if (bytes) MOE_GPU_CHECK(hipMemcpyAsync(get(), host, bytes, hipMemcpyHostToDevice, static_cast<hipStream_t>(stream)));
}
void GuardedBuffer::zero_on(void* stream) {
  if (n_) MOE_GPU_CHECK(hipMemsetAsync(get(), 0, n_, static_cast<hipStream_t>(stream)));
}
void GuardedBuffer::check(std::vector<std::string>& violations, std::int64_t& bytes) {
  if (!n_ || !whole_.get()) return;
  std::vector<std::uint8_t> before(kGuard), after(kGuard);
  const auto* base = static_cast<const char*>(whole_.get());
  MOE_GPU_CHECK(hipMemcpy(before.data(), base, kGuard, hipMemcpyDeviceToHost));
  MOE_GPU_CHECK(hipMemcpy(after.data(), base + kGuard + n_, kGuard, hipMemcpyDeviceToHost));
  bool changed = false;
  for (const auto& [side, got] : {std::pair{RedZoneSide::before, &before}, std::pair{RedZoneSide::after, &after}}) {
    std::string v = red_zone_violation(name_, side, got->data(), got->size(), bytes);
    if (v.empty()) continue;
    violations.push_back(std::move(v));
    changed = true;
  }
  if (changed) fill_guards();
}
HostPinned::HostPinned(std::size_t bytes) {
  if (bytes) MOE_GPU_CHECK(hipHostMalloc(&p_, bytes, 0));
}
HostPinned::~HostPinned() {
  if (p_) (void)hipHostFree(p_);
}
void copy_to_device(void* device, const void* host, std::size_t bytes) {
  if (bytes) MOE_GPU_CHECK(hipMemcpy(device, host, bytes, hipMemcpyHostToDevice));
}
void copy_from_device_on(void* stream, void* host, const void* device, std::size_t bytes) {
  if (bytes) MOE_GPU_CHECK(hipMemcpyAsync(host, device, bytes, hipMemcpyDeviceToHost, static_cast<hipStream_t>(stream)));
}
void DeviceBuffer::zero_on(void* stream) {
  if (n_) MOE_GPU_CHECK(hipMemsetAsync(p_, 0, n_, static_cast<hipStream_t>(stream)));
}

void synchronize() { MOE_GPU_CHECK(hipDeviceSynchronize()); }

Stream::Stream(bool non_blocking) {
  hipStream_t s = nullptr;
  if (non_blocking) MOE_GPU_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  else MOE_GPU_CHECK(hipStreamCreate(&s));
  s_ = s;
}
Stream::~Stream() {
  if (s_) (void)hipStreamDestroy(static_cast<hipStream_t>(s_));
}
void Stream::synchronize() const { MOE_GPU_CHECK(hipStreamSynchronize(static_cast<hipStream_t>(s_))); }

namespace {
void* g_launch_stream = nullptr;  // one process drives the device from one thread (kernels/runtime/device_lock.hpp)

// The gate's spin: until the host sets *flag, or about 2^32 cycles passed.
__global__ void legacy_stream_gate_kernel(volatile int* flag) {
  const long long start = clock64();
  while (*flag == 0 && clock64() - start < (1ll << 32)) {
  }
}
}  // namespace

void* launch_stream() { return g_launch_stream; }
LaunchStreamScope::LaunchStreamScope(void* stream) : previous_(g_launch_stream) { g_launch_stream = stream; }
LaunchStreamScope::~LaunchStreamScope() { g_launch_stream = previous_; }

Graph::Graph(const Stream& stream, void (*fn)(void*), void* ctx) {
  const auto s = static_cast<hipStream_t>(stream.get());
  MOE_GPU_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed));
  hipGraph_t g = nullptr;
  try {
    fn(ctx);
  } catch (...) {
    if (hipStreamEndCapture(s, &g) == hipSuccess && g) (void)hipGraphDestroy(g);
    (void)hipGetLastError();
    throw;
  }
  MOE_GPU_CHECK(hipStreamEndCapture(s, &g));
  graph_ = g;
  hipGraphExec_t e = nullptr;
  MOE_GPU_CHECK(hipGraphInstantiateWithFlags(&e, g, 0));
  exec_ = e;
}
Graph::~Graph() {
  if (exec_) (void)hipGraphExecDestroy(static_cast<hipGraphExec_t>(exec_));
  if (graph_) (void)hipGraphDestroy(static_cast<hipGraph_t>(graph_));
}
void Graph::launch(const Stream& stream) const {
  MOE_GPU_CHECK(hipGraphLaunch(static_cast<hipGraphExec_t>(exec_), static_cast<hipStream_t>(stream.get())));
}

LegacyStreamGate::LegacyStreamGate() {
  void* h = nullptr;
  MOE_GPU_CHECK(hipHostMalloc(&h, sizeof(int), hipHostMallocMapped));
  flag_ = static_cast<int*>(h);
  *flag_ = 0;
  void* d = nullptr;
  MOE_GPU_CHECK(hipHostGetDevicePointer(&d, h, 0));
  legacy_stream_gate_kernel<<<dim3(1), dim3(1), 0, hipStream_t(nullptr)>>>(static_cast<volatile int*>(d));
  MOE_GPU_CHECK_LAUNCH("legacy_stream_gate_kernel");
}
void LegacyStreamGate::release() {
  if (released_) return;
  released_ = true;
  *reinterpret_cast<volatile int*>(flag_) = 1;
  MOE_GPU_CHECK(hipDeviceSynchronize());
}
LegacyStreamGate::~LegacyStreamGate() {
  if (!released_) {
    *reinterpret_cast<volatile int*>(flag_) = 1;
    (void)hipDeviceSynchronize();
  }
  (void)hipHostFree(flag_);
}

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
