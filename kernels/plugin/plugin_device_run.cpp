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

// The bytes of `t`'s device copy: its view, and for x every byte its allocation holds past the view too (a token
// probe's x: poisoned padding rows past T, which a plugin reading past x must meet on the device as on the host).
std::size_t device_bytes(const Checkpoint& c, const Tensor& t) {
  return &t == &c.x ? t.capacity() : t.nbytes();  // capacity() >= nbytes() (Tensor::borrow)
}

// A guarded device copy, named "device <name>" in a violation.
gpu::GuardedBuffer upload(const std::string& name, const void* host, std::size_t bytes) {
  gpu::GuardedBuffer b(bytes, "device " + name);
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
  std::vector<gpu::GuardedBuffer> tensors;
  std::vector<moe_tensor> views;
  gpu::GuardedBuffer ids, weights, out;

  // Every buffer's guards, after the run was synchronized.
  void check(std::vector<std::string>& violations, std::int64_t& bytes) {
    for (gpu::GuardedBuffer* b : {&ids, &weights, &out}) b->check(violations, bytes);
    for (gpu::GuardedBuffer& t : tensors) t.check(violations, bytes);
  }

  bool of(const Checkpoint& c) const {
    const std::vector<const Tensor*> ts = c.tensors();
    if (&c != working || ts.size() != host_data.size()) return false;
    for (std::size_t i = 0; i < ts.size(); ++i)
      if (ts[i]->bytes() != host_data[i] || device_bytes(c, *ts[i]) != tensors[i].bytes()) return false;
    return true;
  }
};

PluginDeviceRunner::PluginDeviceRunner(const moe_plugin_api* api, std::string where) : api_(api), where_(std::move(where)) {}
PluginDeviceRunner::~PluginDeviceRunner() = default;

void PluginDeviceRunner::end_case() {
  case_.reset();
  violations_.clear();
  violation_bytes_ = 0;
}

PluginDeviceRunner::Case& PluginDeviceRunner::case_for(const Checkpoint& working) {
  if (case_ && case_->of(working)) return *case_;
  case_.reset();  // another checkpoint's copies (its end_case() was not called): freed before the new ones exist
  case_ = std::make_unique<Case>();
  case_->working = &working;
  ++uploads_;
  for (const Tensor* t : working.tensors()) {
    case_->host_data.push_back(t->bytes());
    case_->tensors.push_back(upload(t->name(), t->bytes(), device_bytes(working, *t)));
  }
  const std::vector<const Tensor*> ts = working.tensors();
  for (std::size_t i = 0; i < ts.size(); ++i) case_->views.push_back(view(*ts[i], case_->tensors[i].get()));
  return *case_;
}

RunInfo PluginDeviceRunner::run(const moe_problem& m, const Checkpoint& working, const RoutingResult& r, Tensor& out,
                                bool timing) {
  if (const auto& lost = sticky_device_error())  // in process only: an isolated worker has exited by now
    throw_harness_error(where_, "the GPU context was lost in an earlier case (" + *lost +
                                    "): every GPU call of this process fails from here on",
                        "run without --no-isolation: each case after such a fault then gets a fresh process");
  const Clock::time_point t0 = Clock::now();
  const bool fresh = !case_ || !case_->of(working);
  Case& c = case_for(working);
  if (c.out.bytes() != out.nbytes() || !c.out.get()) c.out = gpu::GuardedBuffer(out.nbytes(), "device out");
  c.ids = upload("ids", r.ids.data(), r.ids.size() * sizeof(std::int32_t));
  c.weights = upload("weights", r.weights.data(), r.weights.size() * sizeof(float));
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
  c.check(violations_, violation_bytes_);
  c.out.download(out.bytes(), out.nbytes());
  call.variant[sizeof call.variant - 1] = '\0';
  RunInfo info{sanitize_utf8(call.variant), 0.0, 0, 0.0, 0.0, upload_s};
  if (timing && fresh) {
    info.median_us = gpu::time_median_us_on(stream_->stream.get(), [](void* v) { (*static_cast<Call*>(v))(); }, &call, 2, 5);
    info.timed_repeats = 5;
  }
  return info;
}

namespace {

// One run_device() call as device work: the case's views with x replaced by the DeviceRun's own copy.
class PluginDeviceWork final : public DeviceRun {
 public:
  PluginDeviceWork(const moe_plugin_api* api, std::string where, const moe_problem& m, std::vector<moe_tensor> views,
                   std::size_t x_index, const Tensor& x, const RoutingResult& r, std::size_t out_bytes, DType out_dtype,
                   std::vector<std::int64_t> out_shape)
      : api_(api), where_(std::move(where)), m_(m), views_(std::move(views)), x_index_(x_index), x_(upload(x.name(), x.bytes(), x.nbytes())),
        ids_(upload("ids", r.ids.data(), r.ids.size() * sizeof(std::int32_t))),
        weights_(upload("weights", r.weights.data(), r.weights.size() * sizeof(float))), out_(out_bytes, "device out"),
        out_shape_(std::move(out_shape)), k_(std::int32_t(r.k)) {
    views_[x_index_].data = x_.get();
    out_view_ = {"out", dtype_info(out_dtype).plugin_abi, std::int32_t(out_shape_.size()), out_shape_.data(), out_.get(),
                 out_bytes};
  }
  void enqueue(void* stream) override {
    const moe_device_context ctx{std::uint32_t(sizeof(moe_device_context)), gpu::current_device(), stream};
    char err[1024] = {0}, variant[256] = {0};
    const int rc = api_->run_device(&m_, views_.data(), std::int32_t(views_.size()), static_cast<const std::int32_t*>(ids_.get()),
                                    static_cast<const float*>(weights_.get()), k_, &out_view_, &ctx, variant, sizeof variant,
                                    err, sizeof err);
    if (rc != 0) {
      err[sizeof err - 1] = '\0';
      throw_harness_error(where_, "plugin run_device() failed: " + (err[0] ? sanitize_utf8(err) : std::string("(no message)")));
    }
    gpu::check_last_error("plugin run_device()");
  }
  void write_inputs(const Tensor& x, const RoutingResult& r) override {
    if (x.nbytes() != x_.bytes() || r.ids.size() * sizeof(std::int32_t) != ids_.bytes() ||
        r.weights.size() * sizeof(float) != weights_.bytes())
      throw_harness_error(where_, "new inputs must have the shapes the device run was made for");
    x_.upload(x.bytes(), x.nbytes());
    ids_.upload(r.ids.data(), ids_.bytes());
    weights_.upload(r.weights.data(), weights_.bytes());
  }
  void* output() const override { return out_.get(); }
  // Its own buffers' guards (x, ids, weights, out); the case's weight copies it shares are the runner's.
  std::vector<std::string> red_zone_violations(std::int64_t& bytes) override {
    std::vector<std::string> v;
    for (gpu::GuardedBuffer* b : {&x_, &ids_, &weights_, &out_}) b->check(v, bytes);
    return v;
  }

 private:
  const moe_plugin_api* api_;
  std::string where_;
  moe_problem m_;
  std::vector<moe_tensor> views_;
  std::size_t x_index_;
  gpu::GuardedBuffer x_, ids_, weights_, out_;
  std::vector<std::int64_t> out_shape_;
  moe_tensor out_view_{};
  std::int32_t k_;
};

}  // namespace

std::unique_ptr<DeviceRun> PluginDeviceRunner::device_run(const moe_problem& m, const Checkpoint& working,
                                                          const RoutingResult& routing, DType out_dtype,
                                                          std::string& why_not) {
  const Case& c = case_for(working);  // the token probes' runs may have left another checkpoint's copies
  const std::vector<const Tensor*> ts = working.tensors();
  std::size_t x_index = ts.size();
  for (std::size_t i = 0; i < ts.size(); ++i)
    if (ts[i] == &working.x) x_index = i;
  if (x_index == ts.size()) {
    why_not = "the checkpoint's tensors do not include x";
    return nullptr;
  }
  const std::size_t out_bytes = std::size_t(m.tokens * m.hidden) * dtype_size(out_dtype);
  return std::make_unique<PluginDeviceWork>(api_, where_, m, c.views, x_index, working.x, routing, out_bytes,
                                            out_dtype, std::vector<std::int64_t>{m.tokens, m.hidden});
}

}  // namespace moe
