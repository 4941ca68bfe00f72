// The device probes' host side (harness/pipeline/device_probes.hpp): the probes' row comparison (rows_apart_from,
// probes.hpp) against hand-made outputs,
// and on the host kernel both probes reported as not run, with the reason, never as passed.
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures/tensor_element.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/pipeline/device_probes.hpp"
#include "kernels/host/host_contract_kernel.hpp"

namespace moe {
namespace {

Tensor rows(std::vector<float> v, std::int64_t t) {
  Tensor x("x", DType::f32, {t, std::int64_t(v.size()) / t});
  for (std::size_t i = 0; i < v.size(); ++i) store_element(x, std::int64_t(i), v[i]);
  return x;
}

TEST(DeviceProbes, ExactComparisonFollowsTheSourceRows) {
  const Tensor expected = rows({1, 2, 3, 4, 5, 6}, 3);
  const Tensor rotated = rows({3, 4, 5, 6, 1, 2}, 3);  // row i is expected's row (i + 1) % 3
  std::int64_t first = 7;
  EXPECT_EQ(rows_apart_from(rotated, expected, {1, 2, 0}, true, first), 0);
  EXPECT_EQ(first, -1);
  // Against the identity, every row differs; the first is row 0.
  EXPECT_EQ(rows_apart_from(rotated, expected, {0, 1, 2}, true, first), 3);
  EXPECT_EQ(first, 0);
}

TEST(DeviceProbes, NondeterministicComparisonAllowsOnePercentOfTheRowNorm) {
  // Row norm of (3, 4) is 5: a change of 0.04 in one element is 0.8 % of it (kept), 0.06 is 1.2 % (apart).
  const Tensor expected = rows({3, 4, 0, 1}, 2);
  std::int64_t first = -1;
  EXPECT_EQ(rows_apart_from(rows({3.04f, 4, 0, 1}, 2), expected, {0, 1}, false, first), 0);
  double worst = -1;
  EXPECT_EQ(rows_apart_from(rows({3.06f, 4, 0, 1}, 2), expected, {0, 1}, false, first, &worst), 1);
  EXPECT_EQ(first, 0);
  EXPECT_NEAR(worst, 0.06 / 5, 1e-6);  // |3.06 - 3| / |(3, 4)|; row 1 equal
  // A NaN where the judged run is finite (an unwritten sentinel) is apart however small the rest.
  EXPECT_EQ(rows_apart_from(rows({3, 4, NAN, 1}, 2), expected, {0, 1}, false, first), 1);
  EXPECT_EQ(first, 1);
  // And bit equality is stricter: the 0.8 % change is apart there.
  EXPECT_EQ(rows_apart_from(rows({3.04f, 4, 0, 1}, 2), expected, {0, 1}, true, first), 1);
}

TEST(DeviceProbes, HostKernelSaysNotRunWithTheReason) {
  const Suite s = load_suite_text("suite: t\ndefaults: {hidden: 64, inter: 64, experts: 4, topk: 2}\ncases:\n"
                                  "  - {tokens: 3}\n", "t.yaml");
  HostContractKernel k;
  const CaseRecord r = execute_case(s.cases[0], k, detect_device(), PipelineOptions{});
  ASSERT_EQ(r.status, Status::pass) << r.reason;
  int seen = 0;
  for (const auto& [name, st] : r.probes)
    if (name == "stream_order" || name == "graph_replay") {
      ++seen;
      EXPECT_EQ(st, "not run: a host kernel: no device work to drive") << name;
    }
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace moe
