#include "harness/tuning/table_lock.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <set>

#include "fixtures/atomic_file.hpp"
#include "fixtures/error.hpp"
#include "fixtures/input_file.hpp"
#include "fixtures/input_limits.hpp"
#include "harness/run/kernel_registry.hpp"
#include "harness/tuning/sha256.hpp"

namespace moe {

TableLock lock_of(const TableSet& s, const std::string& library_version) {
  TableLock l;
  l.library_version = library_version;
  for (const TuningTable& t : s.tables)
    l.tables.push_back({t.file, sha256_hex(read_input_file(t.file, "tuning table", kSuiteFileLimit)),
                        static_cast<long long>(t.rows.size())});
  return l;
}

void write_lock(const TableLock& lock, const std::string& path) {
  nlohmann::ordered_json j;
  j["library_version"] = lock.library_version;
  j["tables"] = nlohmann::ordered_json::array();
  for (const LockedTable& t : lock.tables) j["tables"].push_back({{"path", t.path}, {"sha256", t.sha256}, {"rows", t.rows}});
  write_file_atomically(path, j.dump(2) + "\n");
}

TableLock read_lock(const std::string& path) {
  const char* fix = "write the lock with `moe-harness check-table TABLES... --lock LOCK.json`";
  TableLock l;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_input_file(path, "table lock", kSuiteFileLimit));
  } catch (const nlohmann::json::exception& e) {
    throw_bad_input(path, "json", e.what(), fix);
  }
  try {
    l.library_version = j.at("library_version").get<std::string>();
    for (const auto& t : j.at("tables"))
      l.tables.push_back({t.at("path").get<std::string>(), t.at("sha256").get<std::string>(), t.at("rows").get<long long>()});
  } catch (const nlohmann::json::exception& e) {
    throw_bad_input(path, "library_version/tables[path, sha256, rows]", e.what(), fix);
  }
  if (l.tables.empty()) throw_bad_input(path, "tables", "the lock names no table", fix);
  return l;
}

std::vector<std::string> lock_drift(const TableLock& locked, const TableLock& now) {
  std::vector<std::string> out;
  if (locked.library_version != now.library_version)
    out.push_back(fmt::format("kernel library version: locked '{}', now '{}'", locked.library_version,
                              now.library_version));
  std::vector<std::string> a, b;
  for (const LockedTable& t : locked.tables) a.push_back(t.path);
  for (const LockedTable& t : now.tables) b.push_back(t.path);
  if (a != b) {
    out.push_back(fmt::format("table list: locked [{}], now [{}]", fmt::join(a, ", "), fmt::join(b, ", ")));
    return out;  // the files differ: hashes and counts of other files say nothing more
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    const LockedTable &x = locked.tables[i], &y = now.tables[i];
    if (x.sha256 != y.sha256) out.push_back(fmt::format("{}: sha256 locked {}, now {}", x.path, x.sha256, y.sha256));
    if (x.rows != y.rows) out.push_back(fmt::format("{}: row count locked {}, now {}", x.path, x.rows, y.rows));
  }
  return out;
}

std::string library_version_of(const TableSet& s, const std::string& given, double host_budget) {
  if (!given.empty()) return given;
  std::set<std::string> ids;
  for (const TuningTable& t : s.tables) {
    if (t.aiter)
      throw_bad_input(t.file, "--library-version",
                      "an AITER table carries no kernel library version this harness can read",
                      "pass --library-version with the version of the library the set is deployed with");
    for (const TuningRow& r : t.rows) ids.insert(r.kernel_id);
  }
  std::string out;
  for (const std::string& id : ids) {
    const std::string v = is_builtin_kernel_id(id) ? make_kernel_by_id(id, host_budget)->version() : "unknown";
    out += (out.empty() ? "" : ", ") + id + " " + v;
  }
  return out;
}

}  // namespace moe
