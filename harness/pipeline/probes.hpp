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
// The row bound of the probes that compare a kernel's rows across runs where bit equality cannot be asked (a kernel
// that declares itself non-deterministic, or whose rows are not exact across batch layouts): reduction order moves an
// f32 sum by a few f32 ulps of its largest term, so after rounding to the output dtype an element moves by at most
// about one ulp of it: 2^-8 of the row's norm in bf16, the coarsest output dtype; a row that read a NaN, Inf or huge
// value, or was never written, moves by far more.
inline constexpr double kNondetRowRel = 1e-2;
// The rows i of `got` that are not row source[i] of `expected` ([T, H], same dtype): bit for bit when `exact`, else
// within kNondetRowRel of the row's norm with the same elements finite. first_row: the first such row (-1: none);
// worst_rel (when given, non-exact only): the largest row difference relative to its norm (inf where finiteness
// differs). Shared by the token probes and the device probes.
std::int64_t rows_apart_from(const Tensor& got, const Tensor& expected, const std::vector<std::int64_t>& source,
                             bool exact, std::int64_t& first_row, double* worst_rel = nullptr);

ProbeOutcome run_probes(const ProblemSpec& p, KernelUnderTest& kernel, const Checkpoint& working,
                        const RoutingResult& routing, const Tensor& out, Check failed_first,
                        ProbeSwitches on);

}  // namespace moe
