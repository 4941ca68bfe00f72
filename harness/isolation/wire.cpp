#include "harness/isolation/wire.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <fmt/format.h>

namespace moe::wire {

using nlohmann::json;

json dispatch_to_json(const gpu::DispatchOptions& d) {
  return {{"tokens_per_pass", d.tokens_per_pass}, {"grouped_mma", d.grouped_mma}, {"decode_mma", d.decode_mma}};
}

gpu::DispatchOptions dispatch_options(const json& j) {
  gpu::DispatchOptions d;
  d.tokens_per_pass = j.at("tokens_per_pass");
  d.grouped_mma = j.at("grouped_mma");
  d.decode_mma = j.at("decode_mma");
  return d;
}

json to_json(const ExecConfig& c) {
  json j = {{"type", "config"}, {"suite_files", c.suite_files}, {"kernel_ids", c.kernel_ids}, {"plugins", c.plugins},
          {"host_budget", c.host_budget}, {"dispatch", dispatch_to_json(c.dispatch)}, {"timing", c.timing}, {"token_probes", c.token_probes},
          {"sequence_seed", c.sequence_seed ? json(*c.sequence_seed) : json(nullptr)},
          {"reference_cache", c.reference_cache}, {"dispatch_table", c.dispatch_table},
          {"device_required", c.device.required}, {"device_arch", c.device.arch}, {"device_lock", c.device_lock}};
  json failed = json::object();
  for (const auto& [spec, f] : c.plugin_load_failures) failed[spec] = {{"hung", f.hung}, {"how", f.how}};
  j["plugin_load_failures"] = failed;
  return j;
}

ExecConfig exec_config(const json& j) {
  ExecConfig c;
  c.suite_files = j.at("suite_files").get<std::vector<std::string>>();
  c.kernel_ids = j.at("kernel_ids").get<std::vector<std::string>>();
  c.plugins = j.at("plugins").get<std::vector<std::string>>();
  c.host_budget = j.at("host_budget");
  c.dispatch = dispatch_options(j.at("dispatch"));
  c.timing = j.at("timing");
  c.token_probes = j.at("token_probes");
  if (!j.at("sequence_seed").is_null()) c.sequence_seed = j.at("sequence_seed").get<std::uint64_t>();
  c.reference_cache = j.at("reference_cache");
  c.dispatch_table = j.at("dispatch_table");
  c.device.required = j.at("device_required");
  c.device.arch = j.at("device_arch");
  c.device_lock = j.at("device_lock");
  for (const auto& [spec, f] : j.at("plugin_load_failures").items())
    c.plugin_load_failures[spec] = {f.at("hung").get<bool>(), f.at("how").get<std::string>()};
  return c;
}

json to_json(const CaseRequest& r) {
  return {{"type", "case"}, {"case", r.case_index}, {"kernel", r.kernel_index},
          {"seed", r.seed ? json(*r.seed) : json(nullptr)}, {"rerun_probe", r.rerun_probe},
          {"linearity_probe", r.linearity_probe}, {"capture", r.capture}, {"corrupt_pristine", r.corrupt_pristine}};
}

CaseRequest case_request(const json& j) {
  CaseRequest r;
  r.case_index = j.at("case");
  r.kernel_index = j.at("kernel");
  if (!j.at("seed").is_null()) r.seed = j.at("seed").get<std::uint64_t>();
  r.rerun_probe = j.at("rerun_probe");
  r.linearity_probe = j.at("linearity_probe");
  r.capture = j.at("capture");
  r.corrupt_pristine = j.at("corrupt_pristine");
  return r;
}

json to_json(const DeviceDetection& d) {
  json j = {{"runtime_present", d.runtime_present}, {"device_count", d.device_count},
            {"query_failed", d.query_failed}, {"message", d.message}, {"device", nullptr}};
  if (d.device) {
    const DeviceInfo& i = *d.device;
    j["device"] = {{"vendor", i.vendor}, {"name", i.name}, {"arch", i.arch}, {"arch_raw", i.arch_raw},
                   {"compute_units", i.compute_units}, {"memory_bytes", i.memory_bytes},
                   {"driver_version", i.driver_version}, {"runtime_version", i.runtime_version}};
  }
  return j;
}

DeviceDetection device_detection(const json& j) {
  DeviceDetection d;
  d.runtime_present = j.at("runtime_present");
  d.device_count = j.at("device_count");
  d.query_failed = j.at("query_failed");
  d.message = j.at("message");
  if (const json& i = j.at("device"); !i.is_null()) {
    DeviceInfo info;
    info.vendor = i.at("vendor"); info.name = i.at("name"); info.arch = i.at("arch"); info.arch_raw = i.at("arch_raw");
    info.compute_units = i.at("compute_units"); info.memory_bytes = i.at("memory_bytes");
    info.driver_version = i.at("driver_version"); info.runtime_version = i.at("runtime_version");
    d.device = info;
  }
  return d;
}

// The cache counters' JSON names, one table for both directions.
constexpr std::pair<const char*, std::size_t ExecStats::*> kStatFields[] = {
    {"reference_hits", &ExecStats::reference_hits}, {"reference_misses", &ExecStats::reference_misses},
    {"weight_disk_hits", &ExecStats::weight_disk_hits}, {"weight_misses", &ExecStats::weight_misses}};

json to_json(const ExecStats& s) {
  json j = json::object();
  for (const auto& [key, field] : kStatFields) j[key] = s.*field;
  return j;
}

ExecStats exec_stats(const json& j) {
  ExecStats s;
  for (const auto& [key, field] : kStatFields) s.*field = j.at(key).get<std::size_t>();
  return s;
}

std::string floats_hex(const std::vector<float>& v) {
  std::string s;
  s.reserve(v.size() * 8);
  for (float f : v) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    s += fmt::format("{:08x}", u);
  }
  return s;
}

std::vector<float> hex_floats(const std::string& s) {
  std::vector<float> v(s.size() / 8);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::uint32_t u = std::uint32_t(std::stoul(s.substr(i * 8, 8), nullptr, 16));
    std::memcpy(&v[i], &u, 4);
  }
  return v;
}

bool write_line(int fd, const std::string& text) {
  std::string line = text + "\n";
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= std::size_t(n);
  }
  return true;
}

bool LineReader::fill() {
  char tmp[65536];
  for (;;) {
    const ssize_t n = ::read(fd_, tmp, sizeof tmp);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buf_.append(tmp, std::size_t(n));
    return true;
  }
}

bool LineReader::next(std::string& line) {
  const auto nl = buf_.find('\n');
  if (nl == std::string::npos) return false;
  line = buf_.substr(0, nl);
  buf_.erase(0, nl + 1);
  return true;
}

bool LineReader::read_line(std::string& line) {
  while (!next(line))
    if (!fill()) return false;
  return true;
}

}  // namespace moe::wire
