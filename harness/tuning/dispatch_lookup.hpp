// A tuned table set seen from one case on one device: the device its rows are keyed on, and the row a case
// dispatches from (used by the case pipeline for `run --dispatch-table`, and by tune and check-table).
#pragma once
#include <string>

#include "harness/case/case_spec.hpp"
#include "harness/tuning/table_set.hpp"
#include "kernels/kernel_under_test.hpp"
#include "kernels/runtime/device_info.hpp"

namespace moe {

// The device a row of `kernel` is keyed on: its arch and compute units (the GPU's for a kernel that needs one; for
// the host kernel "host" and the hardware threads).
struct TableDevice {
  std::string gfx;
  int cu_num = 0;
  std::string name, driver;
  bool known = false;  // false: a GPU kernel with no identifiable GPU here (message says why)
  std::string message;
};
TableDevice table_device(bool needs_device, const DeviceDetection& detection);

// `run --dispatch-table`: selects on `kernel` the choice of the row case c dispatches from on this device in the
// resolved set (table_set.hpp rule 6; its own rules where the set has no row of the shape) and returns what the
// report's variant adds: " [table FILE:LINE, token T, RULE]" or " [table: no row of this shape for ARCH/CU; the
// kernel's own rules]".
std::string apply_dispatch_table(const TableSet& s, const CaseSpec& c, KernelUnderTest& kernel,
                                 const DeviceDetection& device);

}  // namespace moe
