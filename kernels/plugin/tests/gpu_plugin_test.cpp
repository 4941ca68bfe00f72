// The example device-memory plugin (kernels/plugin/example/example_gpu_plugin.hip, plugin ABI 2) through the
// pipeline on a GPU: it passes small cases of every shape it supports (SiLU and GELU, up/gate rows, a shared expert,
// the router weight on the input, an EP shard, fp16) with a device-event time, its working tensors uploaded once
// per case although run() is called four times (the verdict run and three probes), and the device lock taken once
// and given back by each case; its planted-bug build fails every case. Without a GPU each test skips and says why.
#include <gtest/gtest.h>

#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "kernels/plugin/plugin_kernel.hpp"
#include "kernels/runtime/device_lock.hpp"
#include "kernels/runtime/tests/require_gpu.hpp"

namespace moe {
namespace {

using testing_gpu::device;

Suite suite() {
  return load_suite_text(R"(suite: gpu-plugin
defaults: {hidden: 256, inter: 256, experts: 16, topk: 4}
cases:
  - sweep: {tokens: [1, 5, 16]}
  - {tokens: 7, activation: gelu_tanh, layout: up_gate, input_dtype: f16, output_dtype: f16, intermediate: f16, quant: {weight: fp16}}
  - {tokens: 6, topk: 1, routing: {kind: sigmoid_top1}, router_weight_on: input, n_shared: 1, shared_inter: 128}
  - {tokens: 9, ep: 2, ep_rank: 1}
  - {tokens: 3, activation: gelu_erf, biases: true}
)", "gpu-plugin.yaml");
}

TEST(GpuPlugin, PassesWithOneUploadPerCaseAndDeviceEventTiming) {
  REQUIRE_GPU();
  PluginKernel k(MOE_EXAMPLE_GPU_PLUGIN);
  ASSERT_TRUE(k.device_memory() && k.needs_device());
  int acquired = 0, released = 0;
  install_device_lock({[&] { ++acquired; }, [&] { ++released; }});
  std::size_t n = 0;
  PipelineOptions opt;
  opt.token_probes = false;  // their runs hand the plugin other checkpoints, each uploaded (the test below)
  for (const CaseSpec& c : suite().cases) {
    const CaseRecord r = execute_case(c, k, device(), opt);
    ++n;
    EXPECT_EQ(r.status, Status::pass) << c.id << ": " << r.reason;
    EXPECT_EQ(r.variant.rfind("example-gpu/naive (device ", 0), 0u) << r.variant;
    EXPECT_GT(r.kernel_us, 0.0) << c.id;
    EXPECT_EQ(k.device_uploads(), n) << c.id << ": the working tensors are uploaded once per case";
    EXPECT_EQ(acquired, int(n)) << c.id;
    EXPECT_EQ(released, int(n)) << c.id << ": the device lock is given back when the case ends";
  }
  install_device_lock({});
}

TEST(GpuPlugin, ThePlantedBugFailsEveryCase) {
  REQUIRE_GPU();
  PluginKernel k(MOE_EXAMPLE_GPU_PLUGIN_SWAPPED);
  for (const CaseSpec& c : suite().cases) {
    const CaseRecord r = execute_case(c, k, device(), {});
    EXPECT_EQ(r.status, Status::fail) << c.id << ": " << r.reason;
  }
}

// The device probes (docs/judging.md "Streams and graph replay") on a device plugin: run_device() on the harness's
// non-blocking stream with the default stream held, then captured into a graph and replayed on rotated tokens: both
// run and pass on the example plugin (with the token probes before them), and its default-stream build, right in
// every eager run, fails stream_order on every case.
TEST(GpuPlugin, DeviceProbesRunOnItAndCatchItsDefaultStreamBuild) {
  REQUIRE_GPU();
  PluginKernel k(MOE_EXAMPLE_GPU_PLUGIN), bad(MOE_EXAMPLE_GPU_PLUGIN_DEFAULT_STREAM);
  for (const CaseSpec& c : suite().cases) {
    const CaseRecord r = execute_case(c, k, device(), {});
    EXPECT_EQ(r.status, Status::pass) << c.id << ": " << r.reason;
    int ran = 0;
    for (const auto& [name, st] : r.probes) ran += (name == "stream_order" || name == "graph_replay") && st == "ran";
    EXPECT_EQ(ran, 2) << c.id << ": " << r.details;
    const CaseRecord b = execute_case(c, bad, device(), {});
    EXPECT_EQ(b.failed_check, Check::stream_order) << c.id << ": " << b.reason;
  }
}

// Device red zones (docs/judging.md "Token probes", red_zones): every buffer handed to run_device() has guard bytes
// before and after it. The example plugin leaves them intact on every case; its write-past-out build, whose output
// is right (the extra element lands in the guard), fails red_zones and nothing before it, naming the device output.
TEST(GpuPlugin, RedZonesPassTheExampleAndCatchItsWritePastOutBuild) {
  REQUIRE_GPU();
  PluginKernel k(MOE_EXAMPLE_GPU_PLUGIN), bad(MOE_EXAMPLE_GPU_PLUGIN_WRITE_PAST_OUT);
  auto probe = [](const CaseRecord& r, const std::string& name) {
    for (const auto& [n, st] : r.probes) if (n == name) return st;
    return std::string("(absent)");
  };
  for (const CaseSpec& c : suite().cases) {
    const CaseRecord r = execute_case(c, k, device(), {});
    EXPECT_EQ(r.status, Status::pass) << c.id << ": " << r.reason;
    EXPECT_EQ(probe(r, "red_zones"), "ran") << c.id;
    EXPECT_EQ(r.metrics.at("red_zone_bytes"), 0.0) << c.id;
    const CaseRecord b = execute_case(c, bad, device(), {});
    EXPECT_EQ(b.failed_check, Check::red_zone) << c.id << ": " << b.reason;
    EXPECT_EQ(probe(b, "red_zones"), "ran") << c.id;
    EXPECT_EQ(b.reason.rfind("red zones: device out: ", 0), 0u) << b.reason;
    EXPECT_NE(b.reason.find("byte(s) after the end changed, first at +"), std::string::npos) << b.reason;
    EXPECT_EQ(b.reason.find("before the start"), std::string::npos) << b.reason;
    EXPECT_GT(b.metrics.at("red_zone_bytes"), 0.0) << c.id;
    EXPECT_LE(b.metrics.at("red_zone_bytes"), 2.0) << c.id;  // one bf16 or f16 element
  }
}

}  // namespace
}  // namespace moe
