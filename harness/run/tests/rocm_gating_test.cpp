// Gating, report provenance and tuned-table keys on ROCm devices as the HIP runtime describes them, on the CPU
// through the fake device layer (kernels/runtime/tests/fake_rocm_runtime.hpp) and detect_device(DeviceRuntime&).
// The rules are docs/reliability.md's: a non-target part skips naming the detected and the wanted values; a part
// that cannot be identified (empty arch, a failed query) fails, never skips. The arch everywhere is the ROCm target
// without its features ("gfx942"), the CU count the part's (304 MI300X, 80 MI308X), as aiter's tuned tables key
// their rows (gfx, cu_num).
#include <gtest/gtest.h>

#include "harness/run/gating.hpp"
#include "harness/run/provenance.hpp"
#include "harness/tuning/tuner.hpp"
#include "harness/tuning/tuning_table.hpp"
#include "kernels/runtime/tests/fake_rocm_runtime.hpp"
#include "reports/record_json.hpp"

namespace moe {
namespace {
using testing::FakeGpu;
using testing::FakeRocmRuntime;
using A = GateDecision::Action;

class DeviceKernel : public KernelUnderTest {
 public:
  std::string id() const override { return "rocm-fake"; }
  std::string version() const override { return "0"; }
  bool needs_device() const override { return true; }
  Support supports(const ProblemSpec&, const DeviceInfo*) const override { return Support::yes(); }
  void prepare(const ProblemSpec&, Checkpoint&) override {}
  RunInfo run(const ProblemSpec&, const Checkpoint&, const RoutingResult&, Tensor&) override { return {}; }
};

DeviceDetection on(const FakeGpu& g) {
  FakeRocmRuntime rt({g}, {});
  return detect_device(rt);
}

CaseSpec targeting(std::vector<std::string> archs, std::vector<int> cus) {
  CaseSpec c;
  c.problem.tokens = 4;
  c.targets.archs = std::move(archs);
  c.targets.compute_units = std::move(cus);
  return c;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(RocmGating, TargetPartsRunOnArchAndCuCount) {
  DeviceKernel k;
  EXPECT_EQ(gate(targeting({"gfx942"}, {304}), k, on(testing::mi300x(0)), {}).action, A::run);
  EXPECT_EQ(gate(targeting({"gfx942"}, {80}), k, on(testing::mi308x(0)), {}).action, A::run);
  EXPECT_EQ(gate(targeting({"gfx942", "gfx950"}, {}), k, on(testing::mi355x(0)), {}).action, A::run);
  EXPECT_EQ(gate(targeting({"gfx942"}, {}), k, on(testing::mi300x(0)), {true, "gfx942"}).action, A::run);
}

TEST(RocmGating, NonTargetPartSkipsNamingDetectedAndWanted) {
  DeviceKernel k;
  GateDecision g = gate(targeting({"gfx942"}, {}), k, on(testing::mi355x(0)), {});
  EXPECT_EQ(g.action, A::skip);
  EXPECT_TRUE(has(g.reason, "gfx950") && has(g.reason, "gfx942")) << g.reason;
  EXPECT_FALSE(has(g.reason, "sramecc")) << g.reason;  // the arch, not the target ID
  g = gate(targeting({"gfx942"}, {}), k, on(testing::mi250x(0)), {});
  EXPECT_EQ(g.action, A::skip);
  EXPECT_TRUE(has(g.reason, "gfx90a")) << g.reason;
  g = gate(targeting({"gfx942"}, {304}), k, on(testing::mi308x(0)), {});
  EXPECT_EQ(g.action, A::skip);
  EXPECT_TRUE(has(g.reason, "80") && has(g.reason, "304")) << g.reason;
  g = gate(targeting({"gfx942"}, {80}), k, on(testing::mi300x(0)), {});
  EXPECT_EQ(g.action, A::skip);
  EXPECT_TRUE(has(g.reason, "80") && has(g.reason, "304")) << g.reason;
  // --require-device gfx942 on another part is a failure, not a skip.
  EXPECT_EQ(gate(targeting({}, {}), k, on(testing::mi355x(0)), {true, "gfx942"}).action, A::fail);
}

TEST(RocmGating, UnidentifiedPartFailsNeverSkips) {
  DeviceKernel k;
  FakeGpu blank = testing::mi300x(0);
  blank.gcn_arch_name = "";
  GateDecision g = gate(targeting({"gfx942"}, {}), k, on(blank), {});
  EXPECT_EQ(g.action, A::fail);
  EXPECT_TRUE(has(g.reason, "empty architecture")) << g.reason;

  FakeRocmRuntime props_fail({testing::mi300x(0)}, {});
  props_fail.properties_failure = RuntimeAnswer{RuntimeAnswer::Kind::failed, "hipGetDeviceProperties: hipErrorUnknown"};
  g = gate(targeting({"gfx942"}, {}), k, detect_device(props_fail), {});
  EXPECT_EQ(g.action, A::fail);
  EXPECT_TRUE(has(g.reason, "hipErrorUnknown")) << g.reason;

  FakeRocmRuntime count_fail({testing::mi300x(0)}, {});
  count_fail.count_failure = RuntimeAnswer{RuntimeAnswer::Kind::failed, "hipGetDeviceCount: hipErrorNotInitialized"};
  EXPECT_EQ(gate(targeting({}, {}), k, detect_device(count_fail), {}).action, A::fail);
}

TEST(RocmGating, NoVisibleGpuSkipsWithTheReason_RequireDeviceFails) {
  DeviceKernel k;
  // What ROCm shows a shard given the same id in ROCR_ and HIP_VISIBLE_DEVICES: no device.
  FakeRocmRuntime rt({testing::mi300x(0), testing::mi300x(1)}, {{"ROCR_VISIBLE_DEVICES", "1"}, {"HIP_VISIBLE_DEVICES", "1"}});
  const DeviceDetection d = detect_device(rt);
  GateDecision g = gate(targeting({"gfx942"}, {}), k, d, {});
  EXPECT_EQ(g.action, A::skip);
  EXPECT_TRUE(has(g.reason, "no ROCm-capable device")) << g.reason;
  EXPECT_EQ(gate(targeting({"gfx942"}, {}), k, d, {true, ""}).action, A::fail);
}

TEST(RocmGating, ReportsNameTheArchAndCusNotTheTargetId) {
  const Provenance p = make_provenance(Suite{}, {{"rocm-fake", "0"}}, on(testing::mi300x(0)), std::nullopt);
  EXPECT_EQ(p.device_arch, "gfx942");
  EXPECT_EQ(p.compute_units, 304);
  EXPECT_EQ(p.device_vendor, "amd");
  const auto j = provenance_to_json(p);
  EXPECT_EQ(j["device"]["arch"], "gfx942");
  EXPECT_EQ(j["device"]["compute_units"], 304);
  EXPECT_EQ(provenance_from_json(j).device_arch, "gfx942");
}

TEST(RocmGating, TunedTableKeysAreGfxAndCuNum) {
  const CaseSpec c = targeting({}, {});
  TableDevice t = table_device(true, on(testing::mi300x(0)));
  EXPECT_TRUE(t.known);
  EXPECT_EQ(key_of(c, t.gfx, t.cu_num).gfx, "gfx942");
  EXPECT_EQ(key_of(c, t.gfx, t.cu_num).cu_num, 304);
  t = table_device(true, on(testing::mi308x(0)));
  EXPECT_EQ(t.gfx, "gfx942");
  EXPECT_EQ(t.cu_num, 80);
  EXPECT_EQ(table_device(true, on(testing::mi355x(0))).gfx, "gfx950");
  // A part that cannot be identified keys no table (tune refuses it).
  FakeGpu blank = testing::mi300x(0);
  blank.gcn_arch_name = ":sramecc+:xnack-";
  EXPECT_FALSE(table_device(true, on(blank)).known);
}

}  // namespace
}  // namespace moe
