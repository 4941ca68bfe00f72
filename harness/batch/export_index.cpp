#include "harness/batch/export_index.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>

#include "fixtures/error.hpp"
#include "fixtures/input_file.hpp"
#include "fixtures/tensor.hpp"

namespace moe {

std::string case_dir_name(const std::string& id) {
  std::string name;
  for (const char ch : id) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (std::isalnum(u) || ch == '.' || ch == '+' || ch == '-' || ch == '_' || ch == ',' || ch == '=') name += ch;
    else if (ch == '/') name += '~';
    else name += fmt::format("%{:02x}", unsigned(u));
  }
  if (name.empty() || name[0] == '.') name = "%2e" + name.substr(name.empty() ? 0 : 1);  // never "." or ".." or hidden
  if (name.size() > kMaxCaseDirName)
    name = name.substr(0, kMaxCaseDirName - 17) + fmt::format("#{:016x}", hash_bytes(id.data(), id.size()));
  return name;
}

namespace {
std::string hex(std::uint64_t v) { return fmt::format("{:016x}", v); }

std::uint64_t parse_hex(const nlohmann::json& j, const std::string& file, const std::string& key) {
  const std::string s = j.get<std::string>();
  std::size_t used = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(s, &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.size() != 16 || used != 16) throw_bad_input(file, key, "'" + s + "' is not 16 hex digits", "export the suite again");
  return v;
}
// A key the index does not define (a hand edit, a typo, another tool's index) is refused, as the journal refuses
// one: read silently, it would be a promise the index never made.
void refuse_unknown_keys(const nlohmann::json& o, std::initializer_list<const char*> known, const std::string& file,
                         const std::string& prefix) {
  if (!o.is_object()) throw_bad_input(file, prefix.empty() ? "(file)" : prefix, "is not a JSON object", "export the suite again");
  for (const auto& item : o.items()) {
    const std::string& k = item.key();
    if (std::none_of(known.begin(), known.end(), [&](const char* n) { return k == n; }))
      throw_bad_input(file, prefix + k, "unknown key of an export index", "export the suite again");
  }
}
}  // namespace

std::string export_index_json(const ExportIndex& x) {
  nlohmann::ordered_json j = {{"index_version", kExportIndexVersion}, {"suite", x.suite}, {"suite_file", x.suite_file},
                              {"suite_hash", hex(x.suite_hash)}, {"filters", x.filters}, {"harness", x.harness},
                              {"reference_version", x.reference_version}};
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  for (const ExportEntry& e : x.cases) {
    nlohmann::ordered_json c = {{"id", e.id}, {"exported", e.exported}};
    if (e.exported) {
      c["dir"] = e.dir;
      c["fixture_fingerprint"] = hex(e.fixture_fingerprint);
      c["reference_hash"] = hex(e.reference_hash);
      c["reference_key"] = e.reference_key;
    } else {
      c["reason"] = e.reason;
      c["failed_check"] = std::string(name(e.failed_check));
    }
    cases.push_back(c);
  }
  j["cases"] = cases;
  return j.dump(1) + "\n";
}

ExportIndex read_export_index(const std::filesystem::path& dir) {
  const std::filesystem::path file = dir / kExportIndexFile;
  const std::string where = file.string();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw_bad_input(dir.string(), "--dir", "is not a directory", "give the directory `moe-harness export --suite S --out DIR` wrote");
  if (!std::filesystem::is_regular_file(file, ec))
    throw_bad_input(where, kExportIndexFile,
                    "no export index: the directory is empty or was not written by `moe-harness export --suite` "
                    "(the index is written last, so an interrupted export has none)",
                    "export the cases with `moe-harness export --suite S [--filter GLOB] --out DIR`");
  // A regular file within the report limit (one line a case, far smaller than a report).
  const std::string text = read_input_file(file, "export index", kReportFileLimit);
  ExportIndex x;
  std::string key = "(file)";
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    key = "index_version";
    if (j.at(key).get<int>() != kExportIndexVersion)
      throw_bad_input(where, key, fmt::format("index version {} but this harness reads {}", j.at(key).dump(), kExportIndexVersion),
                      "export the suite again with this harness");
    refuse_unknown_keys(j, {"index_version", "suite", "suite_file", "suite_hash", "filters", "harness",
                            "reference_version", "cases"}, where, "");
    key = "suite";
    x.suite = j.at(key).get<std::string>();
    key = "suite_file";
    x.suite_file = j.at(key).get<std::string>();
    key = "suite_hash";
    x.suite_hash = parse_hex(j.at(key), where, key);
    key = "filters";
    x.filters = j.at(key).get<std::vector<std::string>>();
    key = "harness";
    x.harness = j.at(key).get<std::string>();
    key = "reference_version";
    x.reference_version = j.at(key).get<std::string>();
    key = "cases";
    const nlohmann::json& cases = j.at(key);
    if (!cases.is_array()) throw_bad_input(where, key, "is not an array", "export the suite again");
    std::map<std::string, std::size_t> seen;  // id -> its first position: a case is exported (and judged) once
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const nlohmann::json& c = cases.at(i);
      const std::string at = fmt::format("cases[{}].", i);
      ExportEntry e;
      key = at + "id";
      e.id = c.at("id").get<std::string>();
      if (const auto [it, fresh] = seen.emplace(e.id, i); !fresh)
        throw_bad_input(where, key, fmt::format("case {} is listed twice (cases[{}] and cases[{}])", e.id, it->second, i),
                        "list each case once (export the suite again)");
      key = at + "exported";
      e.exported = c.at("exported").get<bool>();
      if (e.exported)
        refuse_unknown_keys(c, {"id", "exported", "dir", "fixture_fingerprint", "reference_hash", "reference_key"}, where, at);
      else
        refuse_unknown_keys(c, {"id", "exported", "reason", "failed_check"}, where, at);
      if (e.exported) {
        key = at + "dir";
        e.dir = c.at("dir").get<std::string>();
        if (e.dir != case_dir_name(e.id))
          throw_bad_input(where, key, "'" + e.dir + "' is not the directory name of case " + e.id, "export the suite again");
        key = at + "fixture_fingerprint";
        e.fixture_fingerprint = parse_hex(c.at("fixture_fingerprint"), where, key);
        key = at + "reference_hash";
        e.reference_hash = parse_hex(c.at("reference_hash"), where, key);
        key = at + "reference_key";
        e.reference_key = c.at("reference_key").get<std::string>();
      } else {
        key = at + "reason";
        e.reason = c.at("reason").get<std::string>();
        key = at + "failed_check";
        const std::string check = c.at("failed_check").get<std::string>();
        e.failed_check = parse_check(check).value_or(Check::none);
        if (e.failed_check != Check::bad_input && e.failed_check != Check::harness_error)
          throw_bad_input(where, key,
                          "'" + check + "' is neither bad_input nor harness_error (why the case was not exported)",
                          "export the suite again");
      }
      x.cases.push_back(std::move(e));
    }
  } catch (const nlohmann::json::exception& e) {
    throw_bad_input(where, key, std::string("malformed export index: ") + e.what(), "export the suite again");
  }
  return x;
}

std::uint64_t reference_hash(const ReferenceSet& r) {
  std::uint64_t h = hash_bytes(r.routing.ids.data(), r.routing.ids.size() * sizeof(std::int32_t), std::uint64_t(r.routing.k));
  h = hash_bytes(r.routing.weights.data(), r.routing.weights.size() * sizeof(float), h);
  h = hash_bytes(r.contract.data(), r.contract.size() * sizeof(float), h);
  return hash_bytes(r.ideal.data(), r.ideal.size() * sizeof(float), h);
}

}  // namespace moe
