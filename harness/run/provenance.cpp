#include "harness/run/provenance.hpp"

#include <unistd.h>

#include "moe_build_stamp.hpp"  // MOE_BUILD_COMMIT, written at every build (cmake/build_stamp.cmake)

namespace moe {

std::string harness_build_stamp() { return MOE_BUILD_COMMIT; }

Provenance make_provenance(const Suite& suite, const std::vector<std::pair<std::string, std::string>>& kernels,
                           const DeviceDetection& device, std::optional<std::uint64_t> seed) {
  Provenance p;
  p.harness_version = kHarnessVersion;
  p.harness_commit = harness_build_stamp();
  p.kernels = kernels;
  if (device.device) {
    p.device_name = device.device->name; p.device_vendor = device.device->vendor; p.device_arch = device.device->arch;
    p.compute_units = device.device->compute_units; p.driver_version = device.device->driver_version;
    p.runtime_version = device.device->runtime_version;
  }
  p.device_message = device.message;
  p.suite = suite.name; p.suite_file = suite.file; p.suite_hash = suite.file_hash;
  p.seed = seed ? std::to_string(*seed) : "case";
  if (suite.sequence)
    p.sequence = suite.sequence_order + (suite.sequence_order == "shuffled" ? ", seed " + std::to_string(suite.sequence_seed) : "");
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  p.host = host;
  return p;
}

}  // namespace moe
