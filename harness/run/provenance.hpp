// The provenance a report carries: which harness build, kernels, device, suite and seed produced its records.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/case/case_loader.hpp"
#include "kernels/runtime/device_info.hpp"
#include "reports/run_report.hpp"

namespace moe {

// The harness's version, and the source tree this binary was built from: its commit, "+dirty.<12 hex>" when the
// tree differed from it at build time (a hash of the differences), "unknown" outside git (cmake/build_stamp.cmake).
// Reports carry both (provenance harness_version / harness_commit), and `moe-harness --version` prints them.
inline constexpr const char* kHarnessVersion = "0.1.0";
std::string harness_build_stamp();

// Everything but the start and end times: this build, the kernels as (id, version), the device as detected, the
// suite (name, file, hash), the seed override ("case" when each case keeps its own) and the host name.
Provenance make_provenance(const Suite& suite, const std::vector<std::pair<std::string, std::string>>& kernels,
                           const DeviceDetection& device, std::optional<std::uint64_t> seed);

}  // namespace moe
