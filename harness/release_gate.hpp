// `moe-harness gate --policy cases/release.yaml REPORT.json`: every case of the policy suite that applies to the
// report's device (its targets include the device arch; all cases when the run had no GPU and the kernel is the
// host kernel) must be present and passed for every required kernel. Missing, skipped or failed combinations fail
// the gate, each with what to do.
#pragma once
#include <string>
#include <vector>

#include "harness/case_loader.hpp"
#include "reports/report_reader.hpp"

namespace moe {

struct GateViolation {
  std::string id, kernel, problem, todo;
};

std::vector<GateViolation> check_release_gate(const Suite& policy, const ReadReport& report,
                                              const std::vector<std::string>& required_kernels);

}  // namespace moe
