#include "harness/pipeline/device_probes.hpp"

#include <cmath>
#include <cstring>
#include <fmt/format.h>

#include "fixtures/error.hpp"
#include "fixtures/tensor_element.hpp"
#include "harness/pipeline/token_probes.hpp"
#include "verdict/judge.hpp"
#ifdef MOE_HAVE_GPU_RUNTIME
#include "kernels/runtime/device_fault.hpp"
#include "kernels/runtime/gpu_runtime.hpp"
#endif

namespace moe {
namespace {

const char* kStreamOrder = "stream_order";
const char* kGraphReplay = "graph_replay";

std::vector<std::int64_t> identity_rows(std::int64_t t) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(t));
  for (std::int64_t i = 0; i < t; ++i) v[std::size_t(i)] = i;
  return v;
}

// The first replay's inputs: the tokens rotated by one position (x rows, routing ids and weights), so that output
// row i must be the judged run's row source[i] = (i + 1) mod T.
struct Rotated {
  Tensor x;
  RoutingResult routing;
  std::vector<std::int64_t> source;
};

Rotated rotated_by_one(const ProblemSpec& p, const Tensor& x, const RoutingResult& routing) {
  const std::int64_t t = p.tokens, k = routing.k;
  Rotated r{x.clone("x_rotated"), routing, std::vector<std::int64_t>(static_cast<std::size_t>(t))};
  const std::size_t x_row = t ? x.nbytes() / std::size_t(t) : 0;
  for (std::int64_t i = 0; i < t; ++i) {
    const std::int64_t s = (i + 1) % t;
    r.source[std::size_t(i)] = s;
    std::memcpy(r.x.bytes() + std::size_t(i) * x_row, x.bytes() + std::size_t(s) * x_row, x_row);
    for (std::int64_t j = 0; j < k; ++j) {
      r.routing.ids[std::size_t(i * k + j)] = routing.ids[std::size_t(s * k + j)];
      r.routing.weights[std::size_t(i * k + j)] = routing.weights[std::size_t(s * k + j)];
    }
  }
  return r;
}

std::string stream_order_failure(std::int64_t apart, std::int64_t tokens, std::int64_t first) {
  return fmt::format("{} of {} output rows (first: token {}) differ from the judged run when the kernel runs on the "
                     "harness's non-blocking stream with the default stream held busy: work went to the default "
                     "stream, or the output was written after the given stream's work ended", apart, tokens, first);
}

std::string replay_failure(int replay, bool rotate, std::int64_t apart, std::int64_t tokens, std::int64_t first) {
  return fmt::format("replay {} of the captured graph ({}) gave {} of {} output rows (first: row {}) that are not "
                     "the judged run's{}: the graph holds values or pointers of the capture, or work it did not "
                     "capture", replay, rotate ? "the tokens rotated by one, written into the same buffers"
                                               : "the case's own inputs again",
                     apart, tokens, first, rotate ? " rotated with them" : "");
}

// The probes on a kernel that drives its device work itself (DrivenDeviceProbes): the same runs, comparisons and
// messages as on a DeviceRun below, the device work on the driver's side. There are no guarded buffers of the
// harness's to read back: the framework allocated them.
ProbeOutcome run_driven_probes(const ProblemSpec& p, DrivenDeviceProbes& driver, const Checkpoint& working,
                               const RoutingResult& routing, const Tensor& out, bool exact) {
  ProbeOutcome res;
  const std::string unavailable = driver.begin_device_probes(p, working, routing);
  struct End {
    DrivenDeviceProbes& d;
    ~End() { d.end_device_probes(); }
  } end{driver};
  if (!unavailable.empty()) {
    res.status = {{kStreamOrder, "not run: " + unavailable}, {kGraphReplay, "not run: " + unavailable}};
    return res;
  }
  auto sentinel_output = [&](const char* name) {
    Tensor got = out.clone(name);
    fill_sentinel(got, 0);
    return got;
  };
  const std::vector<std::int64_t> identity = identity_rows(p.tokens);
  std::int64_t first = -1;
  Tensor eager = sentinel_output("stream_order_out");
  driver.stream_order_run(eager);
  const std::int64_t apart = rows_apart_from(eager, out, identity, exact, first);
  res.metrics["stream_order_rows_apart"] = double(apart);
  res.status.push_back({kStreamOrder, kProbeRan});
  if (apart > 0) {
    res.failed_check = Check::stream_order;
    res.reason = to_string(Check::stream_order) + ": " + stream_order_failure(apart, p.tokens, first);
    res.status.push_back({kGraphReplay, "not run: " + to_string(res.failed_check) + " failed first"});
    return res;
  }
  if (const std::string declined = driver.graph_replay_declined(); !declined.empty()) {
    res.status.push_back({kGraphReplay, "not run: " + declined});
    return res;
  }
  res.status.push_back({kGraphReplay, kProbeRan});
  if (const std::string refused = driver.capture_graph(); !refused.empty()) {
    res.failed_check = Check::graph_replay;
    res.reason = to_string(Check::graph_replay) + ": the run could not be captured into a graph: " + refused;
    return res;
  }
  const Rotated rot = rotated_by_one(p, working.x, routing);
  std::int64_t replay_apart = 0;
  int replay = 0;
  for (const bool rotate : {true, false}) {
    ++replay;
    Tensor got = sentinel_output("graph_replay_out");
    driver.replay_graph(rotate ? rot.x : working.x, rotate ? rot.routing : routing, got);
    const std::int64_t n = rows_apart_from(got, out, rotate ? rot.source : identity, exact, first);
    replay_apart += n;
    if (n > 0 && res.failed_check == Check::none) {
      res.failed_check = Check::graph_replay;
      res.reason = to_string(Check::graph_replay) + ": " + replay_failure(replay, rotate, n, p.tokens, first);
    }
  }
  res.metrics["graph_replay_rows_apart"] = double(replay_apart);
  return res;
}

}  // namespace

namespace {
#ifdef MOE_HAVE_GPU_RUNTIME
void enqueue_device_run(void* run_and_stream) {
  auto* pair = static_cast<std::pair<DeviceRun*, void*>*>(run_and_stream);
  pair->first->enqueue(pair->second);
}

// The output read back after the sentinel went in and `work` enqueued on `stream` (a non-blocking stream: it does not
// wait for the legacy stream's copies, so they are waited for first).
template <class Work>
Tensor run_into_sentinel(DeviceRun& run, const Tensor& out, const gpu::Stream& stream, Work&& work) {
  Tensor got = out.clone("device_probe_out");
  fill_sentinel(got, 0);
  gpu::copy_to_device(run.output(), got.bytes(), got.nbytes());
  gpu::synchronize();  // a synchronous copy from pageable memory may return before its DMA lands, on the legacy stream
  work();
  gpu::copy_from_device_on(stream.get(), got.bytes(), run.output(), got.nbytes());
  stream.synchronize();
  return got;
}
#endif

}  // namespace

ProbeOutcome run_device_probes(const ProblemSpec& p, KernelUnderTest& kernel, const Checkpoint& working,
                               const RoutingResult& routing, const Tensor& out, Check failed_first, bool on) {
  ProbeOutcome res;
  auto not_run = [&](const std::string& why) {
    res.status = {{kStreamOrder, "not run: " + why}, {kGraphReplay, "not run: " + why}};
    return res;
  };
  if (!on) return not_run("turned off (--no-token-probes)");
  if (failed_first != Check::none) return not_run("the case failed " + to_string(failed_first) + " first");
  if (!kernel.needs_device()) return not_run("a host kernel: no device work to drive");
  if (auto* driven = dynamic_cast<DrivenDeviceProbes*>(&kernel))
    return run_driven_probes(p, *driven, working, routing, out, kernel.deterministic(p));
#ifndef MOE_HAVE_GPU_RUNTIME
  (void)p, (void)working, (void)routing, (void)out;
  return not_run("this build has no GPU runtime");
#else
  if (!kernel.rerunnable()) return not_run("the kernel cannot run again (its output was read from elsewhere)");
  std::string why;
  std::unique_ptr<DeviceRun> run = kernel.device_run(p, working, routing, why);
  if (!run) return not_run(why);
  const bool exact = kernel.deterministic(p);
  const std::vector<std::int64_t> identity = identity_rows(p.tokens);
  auto fail = [&](Check check, std::string reason) {
    if (res.failed_check != Check::none) return;
    res.failed_check = check;
    res.reason = to_string(check) + ": " + reason;
  };
  // The guards of the run's own buffers (DeviceRun::red_zone_violations()), read after its work was waited for: a
  // write out of bounds that only the harness's stream or the graph makes fails red_zone here.
  auto check_guards = [&](const char* when) {
    std::int64_t bytes = 0;
    const std::vector<std::string> zones = run->red_zone_violations(bytes);
    std::string s;
    for (const auto& z : zones) s += (s.empty() ? "" : "; ") + z;
    if (!zones.empty()) fail(Check::red_zone, fmt::format("in {}: {}", when, s));
  };
  const gpu::Stream stream(/*non_blocking=*/true);
  std::pair<DeviceRun*, void*> ctx{run.get(), stream.get()};

  // stream_order: the legacy stream held busy from before the run is enqueued on the harness's stream until its
  // output was read back on that stream.
  Tensor eager = out.clone("stream_order_out");
  fill_sentinel(eager, 0);
  gpu::copy_to_device(run->output(), eager.bytes(), eager.nbytes());
  gpu::synchronize();  // the copies so far (the run's own uploads too) landed before the harness's stream runs
  {
    gpu::LegacyStreamGate gate;
    run->enqueue(stream.get());
    gpu::copy_from_device_on(stream.get(), eager.bytes(), run->output(), eager.nbytes());
    stream.synchronize();
    gate.release();
  }
  check_guards("the stream_order run");
  std::int64_t first = -1;
  const std::int64_t apart = rows_apart_from(eager, out, identity, exact, first);
  res.metrics["stream_order_rows_apart"] = double(apart);
  res.status.push_back({kStreamOrder, kProbeRan});
  if (apart > 0)
    fail(Check::stream_order, stream_order_failure(apart, p.tokens, first));
  if (res.failed_check != Check::none) {
    res.status.push_back({kGraphReplay, "not run: " + to_string(res.failed_check) + " failed first"});
    return res;
  }

  // graph_replay: captured once, replayed on rotated tokens, then on the case's own.
  const std::int64_t t = p.tokens;
  const Rotated rot = rotated_by_one(p, working.x, routing);
  // A run that cannot be captured (a call the capture refuses even in relaxed mode, an instantiation error) fails the
  // probe with the runtime's words: serving engines capture it. A sticky device error stays the harness error it is.
  std::unique_ptr<gpu::Graph> captured;
  try {
    captured = std::make_unique<gpu::Graph>(stream, enqueue_device_run, &ctx);
  } catch (const Error& e) {
    if (sticky_device_error() || e.code() != ExitCode::harness_error) throw;
    res.status.push_back({kGraphReplay, kProbeRan});
    fail(Check::graph_replay, std::string("the run could not be captured into a graph: ") + e.what());
    return res;
  }
  const gpu::Graph& graph = *captured;
  std::int64_t replay_apart = 0;
  int replay = 0;
  for (const bool rotate : {true, false}) {
    ++replay;
    run->write_inputs(rotate ? rot.x : working.x, rotate ? rot.routing : routing);
    const Tensor got = run_into_sentinel(*run, out, stream, [&] { graph.launch(stream); });
    const std::int64_t n = rows_apart_from(got, out, rotate ? rot.source : identity, exact, first);
    replay_apart += n;
    if (n > 0) fail(Check::graph_replay, replay_failure(replay, rotate, n, t, first));
  }
  check_guards("the graph replays");
  res.metrics["graph_replay_rows_apart"] = double(replay_apart);
  res.status.push_back({kGraphReplay, kProbeRan});
  return res;
#endif
}

}  // namespace moe
