// The kernels this build can test: the host contract kernel always, GPU kernels where the build has them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kernels/gpu/dispatch_options.hpp"
#include "kernels/kernel_under_test.hpp"

namespace moe {

// dispatch: the GPU kernels' A/B switches (`--dispatch`); kernels without a dispatch choice ignore them.
std::vector<std::unique_ptr<KernelUnderTest>> make_kernels(const std::vector<std::string>& ids, double host_budget,
                                                           const gpu::DispatchOptions& dispatch = {});
std::string available_kernel_ids();
// The full id for a short name: `host` -> `host-contract`, `gpu` -> `gpu-fused-moe`; any other name unchanged.
// Every command that takes a kernel name (run, merge, compare, gate) spells it through this.
std::string canonical_kernel_id(const std::string& name);

}  // namespace moe
