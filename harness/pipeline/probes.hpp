// Structural probes that follow a passing verdict (docs/cli.md "Judging"), each reported as run or not run with the
// reason, so a check that did not run is never mistaken for one that found nothing:
//   rerun                  the kernel runs again into the inverse sentinel: every element must be written again;
//   rerun_identical        ... and a kernel that declares itself deterministic must reproduce its output bit for bit;
//   linearity_all_weights  every router weight doubled: the output must be exactly twice the first;
//   linearity_one_expert   the most-used local expert's weights doubled: tokens not routed to it stay bit-identical.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "fixtures/tensor.hpp"
#include "kernels/kernel_under_test.hpp"
#include "reference/routing/routing.hpp"
#include "reports/verdict.hpp"

namespace moe {

inline constexpr const char* kProbeRan = "ran";

struct ProbeOutcome {
  std::vector<std::pair<std::string, std::string>> status;  // probe -> "ran" | "not run: <why>", in the order above
  std::map<std::string, double> metrics;  // rerun_unwritten, rerun_mismatches, linearity_mismatches: only if measured
  Check failed_check = Check::none;       // the first probe that failed (rerun, linearity), else none
  std::string reason;
};

struct ProbeSwitches {
  bool rerun = true, linearity = true;
};

// `out` is the first (judged) output on `routing`; `failed_first` is the judge's failed check ("" when it passed):
// after a failure no probe runs.
ProbeOutcome run_probes(const ProblemSpec& p, KernelUnderTest& kernel, const Checkpoint& working,
                        const RoutingResult& routing, const Tensor& out, Check failed_first,
                        ProbeSwitches on);

}  // namespace moe
