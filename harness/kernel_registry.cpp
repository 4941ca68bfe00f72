#include "harness/kernel_registry.hpp"

#include "fixtures/error.hpp"
#include "kernels/host/host_contract_kernel.hpp"
#ifdef MOE_HAVE_GPU_RUNTIME
#include "kernels/gpu/gpu_fused_moe_kernel.hpp"
#endif

namespace moe {

#ifdef MOE_HAVE_GPU_RUNTIME
std::string available_kernel_ids() { return "host-contract, gpu-fused-moe"; }
#else
std::string available_kernel_ids() { return "host-contract (this build has no GPU kernels)"; }
#endif

std::string canonical_kernel_id(const std::string& name) {
  return name == "host" ? std::string("host-contract") : name == "gpu" ? std::string("gpu-fused-moe") : name;
}

std::vector<std::unique_ptr<KernelUnderTest>> make_kernels(const std::vector<std::string>& ids, double host_budget,
                                                           const gpu::DispatchOptions& dispatch) {
  std::vector<std::unique_ptr<KernelUnderTest>> out;
  const double budget = host_budget > 0 ? host_budget : HostContractKernel::kDefaultFlopBudget;
  auto want = [&](const std::string& id) {
    for (auto& i : ids) if (canonical_kernel_id(i) == id || i == "all") return true;
    return ids.empty();
  };
  if (want("host-contract")) out.push_back(std::make_unique<HostContractKernel>(budget));
#ifdef MOE_HAVE_GPU_RUNTIME
  if (want("gpu-fused-moe")) out.push_back(std::make_unique<GpuFusedMoeKernel>(dispatch));
  const bool gpu_ids = true;
#else
  const bool gpu_ids = false;
#endif
  for (const auto& raw : ids) {
    const std::string id = canonical_kernel_id(raw);
    if (id == "gpu-fused-moe" && !gpu_ids)
      throw_bad_input("command line", "--kernel", "this build has no GPU kernels",
                      "configure with `cmake --preset cuda` or `--preset hip` to build them");
    if (id != "all" && id != "host-contract" && !(gpu_ids && id == "gpu-fused-moe"))
      throw_bad_input("command line", "--kernel", "unknown kernel '" + id + "'",
                      "use one of: " + available_kernel_ids() + " (or host, gpu, all)");
  }
  return out;
}

}  // namespace moe
