// KernelUnderTest::end_case() through the pipeline: every run() of one case (the verdict run and the probes'
// reruns) gets the same working checkpoint, and end_case() follows the case's last run() exactly once, also when a
// run() throws, so a kernel that keeps device copies of that checkpoint (a device plugin, kernels/plugin/
// plugin_device_run.hpp) frees them before it goes and never serves them to the next case.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "kernels/host/host_contract_kernel.hpp"

namespace moe {
namespace {

// The host kernel, noting each run() with the working checkpoint it got and each end_case().
class Recording : public HostContractKernel {
 public:
  std::vector<std::string> events;
  std::vector<const Checkpoint*> workings;
  int throw_on_run = 0;  // 1-based run() call that throws; 0: none
  RunInfo run(const ProblemSpec& p, const Checkpoint& w, const RoutingResult& r, Tensor& out) override {
    events.push_back("run");
    workings.push_back(&w);
    if (int(events.size()) == throw_on_run) throw_harness_error("test", "run() throws");
    return HostContractKernel::run(p, w, r, out);
  }
  void end_case() override { events.push_back("end_case"); }
};

const char* kSuite = R"(suite: t
cases:
  - {hidden: 128, inter: 128, experts: 8, topk: 2, tokens: 4}
)";

TEST(EndCase, FollowsTheLastRunOfACaseOnceWithOneWorkingCheckpoint) {
  const Suite s = load_suite_text(kSuite, "t.yaml");
  Recording k;
  const CaseRecord r = execute_case(s.cases[0], k, DeviceDetection{}, {});
  ASSERT_EQ(r.status, Status::pass) << r.reason;
  // The verdict run, the rerun into the inverse sentinel, the two linearity probes on the working checkpoint; the
  // token probes' one run on their own checkpoint (guarded copies of the inputs, the working experts relabeled in
  // place), after an end_case so that no copy kept of the working checkpoint is taken for it; then end_case.
  EXPECT_EQ(k.events, (std::vector<std::string>{"run", "run", "run", "run", "end_case", "run", "end_case"}));
  ASSERT_EQ(k.workings.size(), 5u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(k.workings[i], k.workings.front());
  EXPECT_NE(k.workings[4], k.workings.front());
}

TEST(EndCase, IsCalledWhenARunThrows) {
  const Suite s = load_suite_text(kSuite, "t.yaml");
  Recording k;
  k.throw_on_run = 2;  // the rerun probe
  const CaseRecord r = execute_case(s.cases[0], k, DeviceDetection{}, {});
  EXPECT_EQ(r.status, Status::error);
  EXPECT_EQ(k.events, (std::vector<std::string>{"run", "run", "end_case"}));
}

}  // namespace
}  // namespace moe
