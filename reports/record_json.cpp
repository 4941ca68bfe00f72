#include "reports/record_json.hpp"

#include <cmath>
#include <fmt/format.h>

#include "reports/json_fields.hpp"

namespace moe {

namespace {

using nlohmann::ordered_json;

// NaN and Inf are not JSON: written as null (readers read null back as NaN).
ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }
ordered_json numbers(const std::vector<double>& v) {
  ordered_json a = ordered_json::array();
  for (double x : v) a.push_back(number(x));
  return a;
}

// The JSON names of the fields that are read and written the same way, one table for both directions.
constexpr std::pair<const char*, std::string StatisticRecord::*> kStatisticText[] = {{"status", &StatisticRecord::status},
                                                                                    {"at", &StatisticRecord::at}};
constexpr std::pair<const char*, double StatisticRecord::*> kStatisticNumbers[] = {
    {"z", &StatisticRecord::z}, {"z_threshold", &StatisticRecord::z_threshold}, {"effect", &StatisticRecord::effect},
    {"effect_floor", &StatisticRecord::effect_floor}};
constexpr std::pair<const char*, std::string Provenance::*> kDeviceText[] = {
    {"name", &Provenance::device_name}, {"vendor", &Provenance::device_vendor}, {"arch", &Provenance::device_arch},
    {"driver_version", &Provenance::driver_version}, {"runtime_version", &Provenance::runtime_version},
    {"message", &Provenance::device_message}};

const char* kFix = "pass a file written by `moe-harness run` (schema reports/schema/run_report.schema.json)";

template <class J>
CaseRecord record_from(const J& c, const std::string& file, const std::string& path) {
  const JsonFields<J> F(file, kFix);
  if (!c.is_object()) F.check(c, path.empty() ? "record" : path, JsonWant::object);
  CaseRecord r;
  r.id = F.str(c, path, "id");
  r.kernel = F.str(c, path, "kernel");
  if (r.id.empty() || r.kernel.empty()) F.fail(F.key(path, r.id.empty() ? "id" : "kernel"), "is empty");
  const std::string status = F.str(c, path, "status");
  const std::optional<Status> st = parse_status(status);
  if (!st)
    throw_bad_input(file, F.key(path, "status"), "'" + status.substr(0, 40) + "' is not a status",
                    "a case's status is pass, fail, skip or error");
  r.status = *st;
  r.reason = F.str(c, path, "reason");
  const std::string check = F.str(c, path, "failed_check");
  const std::optional<Check> ck = parse_check(check);
  if (!ck)
    throw_bad_input(file, F.key(path, "failed_check"), "'" + check.substr(0, 40) + "' is not a check",
                    "a case's failed_check is empty or one of " + check_names_list());
  r.failed_check = *ck;
  r.source = F.str(c, path, "source");
  r.variant = F.str(c, path, "variant");
  r.details = F.str(c, path, "details");
  const J& m = F.get(c, path, "metrics", JsonWant::object);
  for (auto it = m.begin(); it != m.end(); ++it)
    r.metrics[it.key()] = F.as_number(F.check(it.value(), F.key(path, "metrics." + it.key()), JsonWant::number));
  if (c.contains("probes")) {  // absent in reports written before probes were recorded
    const J& p = F.get(c, path, "probes", JsonWant::object);
    for (auto it = p.begin(); it != p.end(); ++it)
      r.probes.emplace_back(it.key(),
                            F.check(it.value(), F.key(path, "probes." + it.key()), JsonWant::string).template get<std::string>());
  }
  if (c.contains("systematic")) {  // absent in reports written before the systematic statistics
    const J& sys = F.get(c, path, "systematic", JsonWant::object);
    for (auto it = sys.begin(); it != sys.end(); ++it) {
      const std::string k = F.key(path, "systematic." + it.key());
      const J& o = F.check(it.value(), k, JsonWant::object);
      StatisticRecord st;
      st.name = it.key();
      for (auto [key, field] : kStatisticText) st.*field = F.str(o, k, key);
      for (auto [key, field] : kStatisticNumbers) st.*field = F.num(o, k, key);
      st.failed = F.get(o, k, "failed", JsonWant::boolean).template get<bool>();
      r.systematic.push_back(std::move(st));
    }
  }
  if (c.contains("rounding_contract")) {  // absent for a case no contract was resolved for, and in older reports
    const std::string k = F.key(path, "rounding_contract");
    const J& o = F.get(c, path, "rounding_contract", JsonWant::object);
    r.contract = {F.str(o, k, "effective"), F.str(o, k, "source"), F.str(o, k, "declared"), F.str(o, k, "not_applied")};
    if (r.contract.source != "default" && r.contract.source != "case" && r.contract.source != "kernel" &&
        r.contract.source != "pinned")
      F.fail(F.key(k, "source"), "'" + r.contract.source.substr(0, 40) + "' is not default, case, kernel or pinned");
  }
  r.token_cos = F.numbers(c, path, "token_cos");
  r.token_rel = F.numbers(c, path, "token_rel");
  const J& t = F.get(c, path, "timing", JsonWant::object);
  r.kernel_us = F.num(t, F.key(path, "timing"), "kernel_us");
  r.reference_s = F.num(t, F.key(path, "timing"), "reference_s");
  if (t.contains("phases_s")) {  // absent in reports written before the time by phase was recorded
    const std::string at = F.key(path, "timing");
    const J& ph = F.get(t, at, "phases_s", JsonWant::object);
    for (auto [name, field] : kTimingPhases) r.timing.*field = F.num(ph, F.key(at, "phases_s"), name);
  }
  r.fixture_fingerprint = F.hex64(c, path, "fixture_fingerprint");
  return r;
}

template <class J>
Provenance provenance_from(const J& j, const std::string& file, const std::string& path) {
  const JsonFields<J> F(file, kFix);
  if (!j.is_object()) F.check(j, path, JsonWant::object);
  Provenance p;
  p.harness_version = F.str(j, path, "harness_version");
  p.harness_commit = F.str(j, path, "harness_commit");
  const J& ks = F.get(j, path, "kernels", JsonWant::array);
  for (std::size_t i = 0; i < ks.size(); ++i) {
    const std::string at = F.key(path, "kernels[" + std::to_string(i) + "]");
    const J& k = F.check(ks[i], at, JsonWant::object);
    p.kernels.push_back({F.str(k, at, "id"), F.str(k, at, "version")});
  }
  const std::string dp = F.key(path, "device");
  const J& d = F.get(j, path, "device", JsonWant::object);
  for (auto [key, field] : kDeviceText) p.*field = F.str(d, dp, key);
  const J& cu = F.get(d, dp, "compute_units", JsonWant::integer);
  if (cu.template get<long long>() < 0 || cu.template get<long long>() > (1 << 20))
    F.fail(F.key(dp, "compute_units"), "is out of range [0, 2^20]");
  p.compute_units = cu.template get<int>();
  p.suite = F.str(j, path, "suite");
  p.suite_file = F.str(j, path, "suite_file");
  p.suite_hash = F.hex64(j, path, "suite_hash");
  p.seed = F.str(j, path, "seed");
  p.sequence = F.str_or(j, path, "sequence", "");  // absent: not a call sequence (and every report before them)
  p.start_time = F.str(j, path, "start_time");
  p.end_time = F.str(j, path, "end_time");
  p.host = F.str(j, path, "host");
  // Absent in reports written before runs could stop half-way: those were complete.
  if (j.contains("incomplete")) p.incomplete = F.get(j, path, "incomplete", JsonWant::boolean).template get<bool>();
  p.incomplete_reason = F.str_or(j, path, "incomplete_reason", "");
  return p;
}

}  // namespace

ordered_json provenance_to_json(const Provenance& p) {
  ordered_json kernels = ordered_json::array();
  for (auto& [id, v] : p.kernels) kernels.push_back({{"id", id}, {"version", v}});
  ordered_json device = ordered_json::object();
  for (auto [key, field] : kDeviceText) device[key] = p.*field;
  device["compute_units"] = p.compute_units;
  ordered_json j = {{"harness_version", p.harness_version}, {"harness_commit", p.harness_commit}, {"kernels", kernels},
          {"device", device},
          {"suite", p.suite}, {"suite_file", p.suite_file}, {"suite_hash", fmt::format("{:016x}", p.suite_hash)},
          {"seed", p.seed}, {"start_time", p.start_time}, {"end_time", p.end_time}, {"host", p.host},
          {"incomplete", p.incomplete}, {"incomplete_reason", p.incomplete_reason}};
  if (!p.sequence.empty()) j["sequence"] = p.sequence;
  return j;
}

ordered_json case_record_to_json(const CaseRecord& c) {
  ordered_json m = ordered_json::object();
  for (auto& [k, v] : c.metrics) m[k] = number(v);
  ordered_json probes = ordered_json::object();
  for (auto& [k, v] : c.probes) probes[k] = v;
  ordered_json systematic = ordered_json::object();
  for (const StatisticRecord& st : c.systematic) {
    ordered_json o = ordered_json::object();
    for (auto [key, field] : kStatisticText) o[key] = st.*field;
    for (auto [key, field] : kStatisticNumbers) o[key] = number(st.*field);
    o["failed"] = st.failed;
    systematic[st.name] = std::move(o);
  }
  ordered_json phases = ordered_json::object();
  for (auto [name, field] : kTimingPhases) phases[name] = number(c.timing.*field);
  ordered_json j = {{"id", c.id}, {"kernel", c.kernel}, {"status", name(c.status)}, {"reason", c.reason},
                    {"failed_check", name(c.failed_check)}, {"source", c.source}, {"variant", c.variant},
                    {"metrics", m}, {"probes", probes}, {"systematic", systematic}};
  if (!c.contract.effective.empty())
    j["rounding_contract"] = {{"effective", c.contract.effective}, {"source", c.contract.source},
                              {"declared", c.contract.declared}, {"not_applied", c.contract.not_applied}};
  j.update({{"token_cos", numbers(c.token_cos)}, {"token_rel", numbers(c.token_rel)},
            {"timing", {{"kernel_us", number(c.kernel_us)}, {"reference_s", number(c.reference_s)},
                        {"phases_s", phases}}},
            {"fixture_fingerprint", fmt::format("{:016x}", c.fixture_fingerprint)}, {"details", c.details}});
  return j;
}

CaseRecord case_record_from_json(const nlohmann::ordered_json& j, const std::string& file, const std::string& path) {
  return record_from(j, file, path);
}
CaseRecord case_record_from_json(const nlohmann::json& j, const std::string& file, const std::string& path) {
  return record_from(j, file, path);
}
Provenance provenance_from_json(const nlohmann::ordered_json& j, const std::string& file, const std::string& path) {
  return provenance_from(j, file, path);
}
Provenance provenance_from_json(const nlohmann::json& j, const std::string& file, const std::string& path) {
  return provenance_from(j, file, path);
}

}  // namespace moe
