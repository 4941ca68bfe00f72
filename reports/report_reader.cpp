#include "reports/report_reader.hpp"

#include <cmath>
#include <limits>

#include "fixtures/error.hpp"
#include "fixtures/input_file.hpp"
#include "reports/report_json.hpp"
#include "reports/run_report.hpp"

namespace moe {
namespace {

using Json = nlohmann::ordered_json;
constexpr int kMaxReportDepth = 16;

enum class Want { object, array, string, number };  // number: a JSON number, or null for a non-finite value

const char* name(Want w) {
  switch (w) {
    case Want::object: return "an object";
    case Want::array: return "an array";
    case Want::string: return "a string";
    case Want::number: return "a number (or null)";
  }
  return "";
}

bool is(const Json& v, Want w) {
  switch (w) {
    case Want::object: return v.is_object();
    case Want::array: return v.is_array();
    case Want::string: return v.is_string();
    case Want::number: return v.is_number() || v.is_null();
  }
  return false;
}

// One field of a report: present and of the wanted type, or bad input naming the file and its full key.
class Fields {
 public:
  explicit Fields(const std::string& file) : file_(file) {}

  const Json& get(const Json& parent, const std::string& path, const std::string& key, Want w) const {
    const std::string full = path.empty() ? key : path + "." + key;
    if (!parent.contains(key))
      throw_bad_input(file_, full, "missing", "pass a report.json written by `moe-harness run` (schema " + schema() + ")");
    return check(parent[key], full, w);
  }
  const Json& check(const Json& v, const std::string& full, Want w) const {
    if (!is(v, w))
      throw_bad_input(file_, full, std::string("is ") + v.type_name() + " but must be " + name(w),
                      "pass a report.json written by `moe-harness run` (schema " + schema() + ")");
    return v;
  }
  std::string str(const Json& parent, const std::string& path, const std::string& key) const {
    return get(parent, path, key, Want::string).get<std::string>();
  }
  static double num(const Json& v) { return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>(); }
  std::vector<double> numbers(const Json& parent, const std::string& path, const std::string& key) const {
    const Json& a = get(parent, path, key, Want::array);
    std::vector<double> out;
    out.reserve(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      out.push_back(num(check(a[i], path + "." + key + "[" + std::to_string(i) + "]", Want::number)));
    return out;
  }

 private:
  static std::string schema() { return "reports/schema/run_report.schema.json"; }
  const std::string& file_;
};

}  // namespace

const ReportCase* ReadReport::find(const std::string& id, const std::string& kernel) const {
  for (const auto& c : cases)
    if (c.id == id && c.kernel == kernel) return &c;
  return nullptr;
}

Json read_report_json(const std::filesystem::path& file) {
  const std::string f = file.string();
  const std::string text = read_input_file(file, "report", kReportFileLimit);
  Json j;
  try {
    // A report nests five levels deep; a deeper document is not one, and is refused before it takes memory.
    j = Json::parse(text, [&](int depth, Json::parse_event_t, Json&) {
      if (depth > kMaxReportDepth)
        throw_bad_input(f, "", "nested deeper than " + std::to_string(kMaxReportDepth) + " levels: not a run report",
                        "pass a report.json written by `moe-harness run`");
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    throw_bad_input(f, "", std::string("not valid JSON: ") + e.what(), "pass an intact report.json");
  }
  if (!j.is_object() || !j.contains("schema_version") || !j["schema_version"].is_number_integer() ||
      j["schema_version"].get<long long>() != kRunReportSchemaVersion)
    throw_bad_input(f, "schema_version", "not a moe-harness run report of schema version " + std::to_string(kRunReportSchemaVersion),
                    "re-run with this harness version or compare reports of the same schema");
  return j;
}

ReadReport parse_report(const Json& j, const std::string& f) {
  const Fields F(f);
  ReadReport r;
  r.file = f;
  const Json& prov = F.get(j, "", "provenance", Want::object);
  const Json& dev = F.get(prov, "provenance", "device", Want::object);
  r.suite = F.str(prov, "provenance", "suite");
  r.harness_commit = F.str(prov, "provenance", "harness_commit");
  r.start_time = F.str(prov, "provenance", "start_time");
  r.end_time = F.str(prov, "provenance", "end_time");
  r.device_arch = F.str(dev, "provenance.device", "arch");
  r.device_name = F.str(dev, "provenance.device", "name");
  r.device_message = F.str(dev, "provenance.device", "message");
  const Json& kernels = F.get(prov, "provenance", "kernels", Want::array);
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::string at = "provenance.kernels[" + std::to_string(i) + "]";
    const Json& k = F.check(kernels[i], at, Want::object);
    r.kernel_ids.push_back(F.str(k, at, "id"));
    r.kernels.push_back(r.kernel_ids.back() + " " + F.str(k, at, "version"));
  }
  const Json& cases = F.get(j, "", "cases", Want::array);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string at = "cases[" + std::to_string(i) + "]";
    const Json& c = F.check(cases[i], at, Want::object);
    ReportCase rc;
    rc.id = F.str(c, at, "id");
    rc.kernel = F.str(c, at, "kernel");
    if (rc.id.empty() || rc.kernel.empty())
      throw_bad_input(f, at + (rc.id.empty() ? ".id" : ".kernel"), "is empty", "pass a report.json written by `moe-harness run`");
    rc.status = F.str(c, at, "status");
    if (rc.status != "pass" && rc.status != "fail" && rc.status != "skip" && rc.status != "error")
      throw_bad_input(f, at + ".status", "'" + rc.status + "' is not a status", "a case's status is pass, fail, skip or error");
    rc.reason = F.str(c, at, "reason");
    rc.variant = F.str(c, at, "variant");
    rc.failed_check = F.str(c, at, "failed_check");
    rc.details = F.str(c, at, "details");
    rc.fixture_fingerprint = F.str(c, at, "fixture_fingerprint");
    const Json& m = F.get(c, at, "metrics", Want::object);
    for (auto it = m.begin(); it != m.end(); ++it)
      rc.metrics[it.key()] = Fields::num(F.check(it.value(), at + ".metrics." + it.key(), Want::number));
    if (c.contains("systematic")) {
      const std::string sat = at + ".systematic";
      const Json& sys = F.get(c, at, "systematic", Want::object);
      for (auto it = sys.begin(); it != sys.end(); ++it) {
        const std::string k = sat + "." + it.key();
        const Json& o = F.check(it.value(), k, Want::object);
        StatisticRecord st;
        st.name = it.key();
        st.status = F.str(o, k, "status");
        st.z = Fields::num(F.get(o, k, "z", Want::number));
        st.z_threshold = Fields::num(F.get(o, k, "z_threshold", Want::number));
        st.effect = Fields::num(F.get(o, k, "effect", Want::number));
        st.effect_floor = Fields::num(F.get(o, k, "effect_floor", Want::number));
        st.at = F.str(o, k, "at");
        if (!o.contains("failed") || !o["failed"].is_boolean())
          throw_bad_input(f, k + ".failed", "missing or not a boolean", "pass a report.json written by `moe-harness run`");
        st.failed = o["failed"].get<bool>();
        rc.systematic.push_back(std::move(st));
      }
    }
    rc.token_cos = F.numbers(c, at, "token_cos");
    rc.token_rel = F.numbers(c, at, "token_rel");
    r.cases.push_back(std::move(rc));
  }
  return r;
}

ReadReport read_report(const std::filesystem::path& file) { return parse_report(read_report_json(file), file.string()); }

}  // namespace moe
