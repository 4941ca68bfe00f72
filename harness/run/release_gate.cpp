#include "harness/run/release_gate.hpp"

#include <algorithm>
#include <map>

#include "harness/run/kernel_registry.hpp"

namespace moe {

std::vector<GateViolation> check_release_gate(const Suite& policy, const ReadReport& report,
                                              const std::vector<std::string>& required_kernels) {
  std::vector<std::string> named = report.kernel_ids;  // provenance, then any kernel only the cases name
  for (const auto& c : report.cases)
    if (std::find(named.begin(), named.end(), c.kernel) == named.end()) named.push_back(c.kernel);
  const std::vector<std::string> kernels =
      required_kernels.empty() ? named : resolve_kernel_names(required_kernels, named, "--kernel");
  const std::string run_it = "moe-harness run --suite " + policy.file;
  std::vector<GateViolation> out;
  if (report.cases.empty())
    out.push_back({"(report)", "(any)", "the report holds no case: nothing was checked",
                   "run the release suite and gate its report: " + run_it});
  std::map<std::pair<std::string, std::string>, int> seen;
  for (const auto& c : report.cases)
    if (++seen[{c.id, c.kernel}] == 2)
      out.push_back({c.id, c.kernel, "recorded more than once in the report (which verdict counts is unknown)",
                     "merge shard reports with `moe-harness merge` (it refuses duplicates), or rerun: " + run_it});
  for (const std::string& k : kernels) {
    const bool device_kernel = k != "host-contract";
    if (device_kernel && report.device_arch.empty()) {
      out.push_back({"(report)", k, "the report names no device (provenance.device.arch is empty), so the policy cases "
                                    "for this device kernel cannot be chosen",
                     "run the release suite on the target GPU with --require-device ARCH: " + run_it + " --kernel " + k});
      continue;
    }
    int applicable = 0;
    for (const CaseSpec& c : policy.cases) {
      // A device kernel is held to the cases that target the run's device; the host kernel to every case.
      if (device_kernel && !c.targets.archs.empty() &&
          std::find(c.targets.archs.begin(), c.targets.archs.end(), report.device_arch) == c.targets.archs.end())
        continue;
      ++applicable;
      const std::string rerun = run_it + " --filter '" + c.id + "' --kernel " + k;
      const ReportCase* r = report.find(c.id, k);
      if (!r) out.push_back({c.id, k, "missing from the report", "run it: " + rerun});
      else if (r->status == Status::skip) out.push_back({c.id, k, "skipped: " + r->reason, "make it run here (right device, kernel support), then: " + rerun});
      else if (r->status != Status::pass) out.push_back({c.id, k, to_string(r->status) + ": " + r->reason, "fix the kernel (see the report's details), then: " + rerun});
    }
    if (applicable == 0)
      out.push_back({"(policy)", k, "no case of the policy applies to device '" + report.device_arch + "': nothing gated",
                     "gate with the policy for this device, or run on a device the policy targets"});
  }
  return out;
}

}  // namespace moe
