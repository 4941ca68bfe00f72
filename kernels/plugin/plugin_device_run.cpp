#include "kernels/plugin/plugin_device_run.hpp"

#include <chrono>
#include <vector>

#include "fixtures/error.hpp"
#include "kernels/plugin/plugin_checks.hpp"
#include "kernels/runtime/device_fault.hpp"
#include "kernels/runtime/device_lock.hpp"
#include "kernels/runtime/gpu_runtime.hpp"

namespace moe {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

moe_tensor view(const Tensor& t, void* device_data) {
  return {t.name().c_str(), dtype_info(t.dtype()).plugin_abi, std::int32_t(t.shape().size()), t.shape().data(),
          device_data, t.nbytes()};
}

gpu::DeviceBuffer upload(const void* host, std::size_t bytes) {
  gpu::DeviceBuffer b(bytes);
  b.upload(host, bytes);
  return b;
}

}  // namespace

struct PluginDeviceRunner::Streams {
  gpu::Stream stream;
};

// One case's device state. The lock is declared first: it is released after every buffer is freed.
struct PluginDeviceRunner::Case {
  DeviceLockGuard lock;
  const Checkpoint* working = nullptr;           // which working checkpoint the copies are of
  std::vector<const std::byte*> host_data;       // and its tensors' host storage, checked on every run
  std::vector<gpu::DeviceBuffer> tensors;
  std::vector<moe_tensor> views;
  gpu::DeviceBuffer ids, weights, out;

  bool of(const Checkpoint& c) const {
    const std::vector<const Tensor*> ts = c.tensors();
    if (&c != working || ts.size() != host_data.size()) return false;
    for (std::size_t i = 0; i < ts.size(); ++i)
      if (ts[i]->bytes() != host_data[i] || ts[i]->nbytes() != tensors[i].bytes()) return false;
    return true;
  }
};

PluginDeviceRunner::PluginDeviceRunner(const moe_plugin_api* api, std::string where) : api_(api), where_(std::move(where)) {}
PluginDeviceRunner::~PluginDeviceRunner() = default;

void PluginDeviceRunner::end_case() { case_.reset(); }

RunInfo PluginDeviceRunner::run(const moe_problem& m, const Checkpoint& working, const RoutingResult& r, Tensor& out,
                                bool timing) {
  if (const auto& lost = sticky_device_error())  // in process only: an isolated worker has exited by now
    throw_harness_error(where_, "the GPU context was lost in an earlier case (" + *lost +
                                    "): every GPU call of this process fails from here on",
                        "run without --no-isolation: each case after such a fault then gets a fresh process");
  const Clock::time_point t0 = Clock::now();
  const bool fresh = !case_ || !case_->of(working);
  if (fresh) {
    case_.reset();  // another case's copies (its end_case() was not called): freed before the new ones exist
    case_ = std::make_unique<Case>();
    case_->working = &working;
    ++uploads_;
    for (const Tensor* t : working.tensors()) {
      case_->host_data.push_back(t->bytes());
      case_->tensors.push_back(upload(t->bytes(), t->nbytes()));
    }
    const std::vector<const Tensor*> ts = working.tensors();
    for (std::size_t i = 0; i < ts.size(); ++i) case_->views.push_back(view(*ts[i], case_->tensors[i].get()));
  }
  Case& c = *case_;
  if (c.out.bytes() != out.nbytes() || !c.out.get()) c.out = gpu::DeviceBuffer(out.nbytes());
  c.ids = upload(r.ids.data(), r.ids.size() * sizeof(std::int32_t));
  c.weights = upload(r.weights.data(), r.weights.size() * sizeof(float));
  c.out.upload(out.bytes(), out.nbytes());  // the sentinel the harness pre-filled
  if (!stream_) stream_ = std::make_unique<Streams>();
  const double upload_s = seconds_since(t0);

  struct Call {
    const moe_plugin_api* api;
    const moe_problem* m;
    Case* c;
    moe_tensor out;
    moe_device_context ctx;
    std::int32_t k;
    const std::string* where;
    char variant[256] = {0};
    void operator()() {
      char err[1024] = {0};
      const int rc = api->run_device(m, c->views.data(), std::int32_t(c->views.size()),
                                     static_cast<const std::int32_t*>(c->ids.get()), static_cast<const float*>(c->weights.get()),
                                     k, &out, &ctx, variant, sizeof variant, err, sizeof err);
      if (rc != 0) {
        err[sizeof err - 1] = '\0';
        throw_harness_error(*where, "plugin run_device() failed: " + (err[0] ? sanitize_utf8(err) : std::string("(no message)")));
      }
      gpu::check_last_error("plugin run_device()");
    }
  } call{api_, &m, &c, view(out, c.out.get()),
         {std::uint32_t(sizeof(moe_device_context)), gpu::current_device(), stream_->stream.get()}, std::int32_t(r.k), &where_};

  call();
  stream_->stream.synchronize();  // an asynchronous fault of the plugin's work surfaces here, for this case
  c.out.download(out.bytes(), out.nbytes());
  call.variant[sizeof call.variant - 1] = '\0';
  RunInfo info{sanitize_utf8(call.variant), 0.0, 0, 0.0, 0.0, upload_s};
  if (timing && fresh) {
    info.median_us = gpu::time_median_us_on(stream_->stream.get(), [](void* v) { (*static_cast<Call*>(v))(); }, &call, 2, 5);
    info.timed_repeats = 5;
  }
  return info;
}

}  // namespace moe
