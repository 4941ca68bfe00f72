#include "harness/run/gating.hpp"

#include <gtest/gtest.h>

namespace moe {
namespace {
class FakeGpuKernel : public KernelUnderTest {
 public:
  std::string id() const override { return "fake-gpu"; }
  std::string version() const override { return "0"; }
  bool needs_device() const override { return true; }
  Support supports(const ProblemSpec& p, const DeviceInfo*) const override {
    return p.tokens > 100 ? Support::no("tokens above 100") : Support::yes();
  }
  void prepare(const ProblemSpec&, Checkpoint&) override {}
  RunInfo run(const ProblemSpec&, const Checkpoint&, const RoutingResult&, Tensor&) override { return {}; }
};
CaseSpec a_case() {
  CaseSpec c;
  c.problem.tokens = 4;
  return c;
}
DeviceDetection mi300() {
  DeviceDetection d;
  d.runtime_present = true;
  d.device_count = 1;
  d.device = DeviceInfo{"amd", "AMD Instinct MI300X", "gfx942", "gfx942:sramecc+:xnack-", 304, 0, "", ""};
  return d;
}
using A = GateDecision::Action;
}  // namespace

TEST(Gating, NoRuntimeSkipsWithTheReason_RequireDeviceFails) {
  FakeGpuKernel k;
  DeviceDetection none;
  none.message = "no GPU runtime in this build";
  auto g = gate(a_case(), k, none, {});
  EXPECT_EQ(g.action, A::skip);
  EXPECT_NE(g.reason.find("no GPU runtime in this build"), std::string::npos);
  EXPECT_EQ(gate(a_case(), k, none, {true, ""}).action, A::fail);
}

TEST(Gating, RuntimeThatCannotIdentifyTheDeviceFailsNeverSkips) {
  FakeGpuKernel k;
  DeviceDetection d = mi300();
  d.query_failed = true;
  d.message = "hipGetDeviceProperties: invalid device";
  EXPECT_EQ(gate(a_case(), k, d, {}).action, A::fail);
  DeviceDetection empty = mi300();
  empty.device->arch_raw = "";
  empty.device->arch = "";
  EXPECT_EQ(gate(a_case(), k, empty, {}).action, A::fail);
}

TEST(Gating, ArchAndCuTargetsSkipNamingDetectedAndWanted) {
  FakeGpuKernel k;
  CaseSpec c = a_case();
  c.targets.archs = {"gfx950"};
  auto g = gate(c, k, mi300(), {});
  EXPECT_EQ(g.action, A::skip);
  EXPECT_NE(g.reason.find("gfx942"), std::string::npos);
  EXPECT_NE(g.reason.find("gfx950"), std::string::npos);
  c.targets.archs = {"gfx942"};
  c.targets.compute_units = {80};
  g = gate(c, k, mi300(), {});
  EXPECT_EQ(g.action, A::skip);
  EXPECT_NE(g.reason.find("304"), std::string::npos);
  EXPECT_NE(g.reason.find("80"), std::string::npos);
  c.targets.compute_units = {304};
  EXPECT_EQ(gate(c, k, mi300(), {}).action, A::run);
}

TEST(Gating, RequiredArchMismatchFails) {
  FakeGpuKernel k;
  EXPECT_EQ(gate(a_case(), k, mi300(), {true, "gfx950"}).action, A::fail);
  EXPECT_EQ(gate(a_case(), k, mi300(), {true, "gfx942"}).action, A::run);
}

TEST(Gating, KernelDeclineSkipsWithItsReason) {
  FakeGpuKernel k;
  CaseSpec c = a_case();
  c.problem.tokens = 500;
  auto g = gate(c, k, mi300(), {});
  EXPECT_EQ(g.action, A::skip);
  EXPECT_NE(g.reason.find("tokens above 100"), std::string::npos);
  g = gate(c, k, mi300(), {true, ""});  // a required device does not turn a kernel's own decline into a failure
  EXPECT_EQ(g.action, A::skip);
}

// A device-memory plugin in a build without a GPU runtime needs no device of this build (needs_device false) and
// declines every case for want of one: a skip, and under --require-device a failure as a missing device is (issue 48:
// it exited 4, nothing checked, where the README says 1).
TEST(Gating, DeclinedForWantOfADevice_FailsUnderRequireDevice) {
  class DevicePluginInHostBuild : public FakeGpuKernel {
   public:
    bool needs_device() const override { return false; }
    Support supports(const ProblemSpec&, const DeviceInfo*) const override {
      return Support::no_device_here("needs a GPU build");
    }
  } k;
  EXPECT_EQ(gate(a_case(), k, DeviceDetection{}, {}).action, A::skip);
  const GateDecision g = gate(a_case(), k, DeviceDetection{}, {true, ""});
  EXPECT_EQ(g.action, A::fail);
  EXPECT_NE(g.reason.find("--require-device"), std::string::npos) << g.reason;
  EXPECT_NE(g.reason.find("needs a GPU build"), std::string::npos) << g.reason;
}

}  // namespace moe
