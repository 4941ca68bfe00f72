#include "harness/release_gate.hpp"

#include <algorithm>

namespace moe {

std::vector<GateViolation> check_release_gate(const Suite& policy, const ReadReport& report,
                                              const std::vector<std::string>& required_kernels) {
  std::vector<GateViolation> out;
  std::vector<std::string> kernels = required_kernels;
  if (kernels.empty())
    for (const auto& c : report.cases)
      if (std::find(kernels.begin(), kernels.end(), c.kernel) == kernels.end()) kernels.push_back(c.kernel);
  for (const CaseSpec& c : policy.cases)
    for (const std::string& k : kernels) {
      const bool gpu_kernel = k.rfind("host-contract", 0) != 0;
      // A GPU kernel is held to the cases that target the run's device; the host kernel to every case.
      if (gpu_kernel && !c.targets.archs.empty() &&
          std::find(c.targets.archs.begin(), c.targets.archs.end(), report.device_arch) == c.targets.archs.end())
        continue;
      const std::string rerun = "moe-harness run --suite " + policy.file + " --filter '" + c.id + "' --kernel " + k;
      const ReportCase* r = report.find(c.id, k);
      if (!r) out.push_back({c.id, k, "missing from the report", "run it: " + rerun});
      else if (r->status == "skip") out.push_back({c.id, k, "skipped: " + r->reason, "make it run here (right device, kernel support), then: " + rerun});
      else if (r->status != "pass") out.push_back({c.id, k, r->status + ": " + r->reason, "fix the kernel (see the report's details), then: " + rerun});
    }
  return out;
}

}  // namespace moe
