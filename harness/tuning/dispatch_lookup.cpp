#include "harness/tuning/dispatch_lookup.hpp"

#include <fmt/format.h>

#include <thread>

namespace moe {

TableDevice table_device(bool needs_device, const DeviceDetection& det) {
  TableDevice d;
  if (!needs_device) {
    d.gfx = "host";
    d.cu_num = int(std::thread::hardware_concurrency());
    d.name = "host CPU";
    d.known = true;
    return d;
  }
  d.message = det.message;
  if (!det.device) return d;
  d.gfx = det.device->arch;
  d.cu_num = det.device->compute_units;
  d.name = det.device->name;
  d.driver = det.device->driver_version;
  d.known = !det.query_failed && !d.gfx.empty();
  return d;
}

std::string apply_dispatch_table(const TableSet& s, const CaseSpec& c, KernelUnderTest& kernel,
                                 const DeviceDetection& device) {
  const TableDevice d = table_device(kernel.needs_device(), device);
  const std::string gfx = d.known ? d.gfx : "unidentified";
  const auto l = lookup_in_set(s, key_of(c, gfx, d.cu_num));
  kernel.select_dispatch(l ? l->row->dispatch : "");
  if (!l) return fmt::format(" [table: no row of this shape for {}/{}; the kernel's own rules]", gfx, d.cu_num);
  return fmt::format(" [table {}, token {}, {}]", row_label(s, l->ref), l->row->token, l->rule);
}

}  // namespace moe
