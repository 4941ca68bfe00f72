// The kernels this build can test: the host contract kernel always, GPU kernels where the build has them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_under_test.hpp"

namespace moe {

std::vector<std::unique_ptr<KernelUnderTest>> make_kernels(const std::vector<std::string>& ids, double host_budget);
std::string available_kernel_ids();

}  // namespace moe
