// `moe-harness gate --policy cases/release.yaml REPORT.json`: every case of the policy suite that applies to the
// report's device (its targets include the device arch; every case for the host kernel) must be present and passed
// for every required kernel. Missing, skipped or failed combinations fail the gate, each with what to do; so do a
// report that holds no case, a (case, kernel) recorded twice, a device kernel in a report that names no device, and
// a required kernel to which no policy case applies (nothing would be gated).
#pragma once
#include <string>
#include <vector>

#include "harness/case/case_loader.hpp"
#include "reports/report_reader.hpp"

namespace moe {

struct GateViolation {
  std::string id, kernel, problem, todo;
};

// required_kernels: names as given on the command line (short names allowed); empty: every kernel the report names.
// An unknown kernel name is bad input (exit 2).
std::vector<GateViolation> check_release_gate(const Suite& policy, const ReadReport& report,
                                              const std::vector<std::string>& required_kernels);

}  // namespace moe
