#include "harness/run/output_guard.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <climits>
#include <system_error>

#include "fixtures/atomic_file.hpp"
#include "fixtures/error.hpp"

namespace moe {

namespace fs = std::filesystem;

namespace output_guard {  // named: the unity build joins this file with others

// A path as an error message shows it: a 4096-byte path would bury the message.
std::string shown(const std::string& s) {
  return s.size() <= 120 ? s : s.substr(0, 100) + "...(" + std::to_string(s.size()) + " bytes)";
}

struct Identity {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string resolved;  // realpath of the nearest existing directory, the rest appended
};

Identity identify(const fs::path& p) {
  Identity id;
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) {
    id.exists = true;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
  }
  std::error_code ec;
  const fs::path absolute = fs::absolute(p, ec);
  const fs::path r = fs::weakly_canonical(absolute, ec);
  id.resolved = (ec ? absolute.lexically_normal() : r).string();
  return id;
}

bool same(const Identity& a, const Identity& b) {
  return (a.exists && b.exists && a.dev == b.dev && a.ino == b.ino) || a.resolved == b.resolved;
}

struct Output {
  fs::path path;
  std::string key;
  Identity id;
};

}  // namespace output_guard

void check_path_limits(const fs::path& path, const std::string& key, std::size_t reserve) {
  if (path.empty()) return;
  const std::string fix = "choose a shorter path (a name of at most " + std::to_string(NAME_MAX - reserve) +
                          " bytes, the whole path below " + std::to_string(PATH_MAX) + ")";
  std::size_t components = 0;
  for (auto it = path.begin(); it != path.end(); ++it) ++components;
  std::size_t i = 0;
  for (const fs::path& c : path) {
    const std::size_t limit = NAME_MAX - (++i == components ? reserve : 0);
    if (c.string().size() > limit)
      throw_bad_input(output_guard::shown(path.string()), key,
                      fmt::format("its component '{}' is {} bytes; the file system takes at most {} (NAME_MAX {}{})",
                                  output_guard::shown(c.string()), c.string().size(), limit, NAME_MAX,
                                  i == components && reserve ? ", less the temporary file's suffix" : ""),
                      fix);
  }
  std::error_code ec;
  const std::size_t bytes = fs::absolute(path, ec).string().size();
  if (bytes + reserve >= PATH_MAX)
    throw_bad_input(
        output_guard::shown(path.string()), key,
        fmt::format("the path is {} bytes as an absolute path; the system takes paths below {} (PATH_MAX){}", bytes,
                    PATH_MAX, reserve ? ", less the temporary file's suffix" : ""),
        fix);
}

OutputGuard& OutputGuard::input(const fs::path& path, std::string key) {
  if (!path.empty()) inputs_.push_back({path, std::move(key)});
  return *this;
}

OutputGuard& OutputGuard::output_file(const fs::path& path, std::string key) {
  if (!path.empty()) files_.push_back({path, std::move(key)});
  return *this;
}

OutputGuard& OutputGuard::output_dir(const fs::path& path, std::string key, std::vector<std::string> files) {
  if (!path.empty()) {
    dirs_.push_back({path, std::move(key)});
    dir_files_.push_back(std::move(files));
  }
  return *this;
}

void OutputGuard::check() const {
  std::vector<output_guard::Output> outputs;
  for (const Named& f : files_) {
    check_path_limits(f.path, f.key, kTempSuffixBytes);
    check_output_path(f.path, f.key);
    outputs.push_back({f.path, f.key, output_guard::identify(f.path)});
  }
  for (std::size_t d = 0; d < dirs_.size(); ++d) {
    check_path_limits(dirs_[d].path, dirs_[d].key, 0);
    for (const std::string& name : dir_files_[d])
      check_path_limits(dirs_[d].path / name, dirs_[d].key, kTempSuffixBytes);
    check_output_dir(dirs_[d].path, dirs_[d].key);
    for (const std::string& name : dir_files_[d])
      outputs.push_back({dirs_[d].path / name, dirs_[d].key, output_guard::identify(dirs_[d].path / name)});
  }
  for (const Named& in : inputs_) {
    const output_guard::Identity id = output_guard::identify(in.path);
    if (!id.exists) continue;  // its reader refuses it, naming it
    for (const output_guard::Output& o : outputs)
      if (output_guard::same(o.id, id))
        throw_bad_input(
            output_guard::shown(o.path.string()), o.key,
            fmt::format("{} writes this file, which is the input {} ({}): writing it would destroy the input", o.key,
                        output_guard::shown(in.path.string()), in.key),
            fmt::format("write {} to another path than {}", o.key, in.key));
  }
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (output_guard::same(outputs[i].id, outputs[j].id))
        throw_bad_input(
            output_guard::shown(outputs[j].path.string()), outputs[j].key,
            fmt::format("{} and {} both write this file: one would replace the other", outputs[i].key, outputs[j].key),
            fmt::format("give {} and {} different paths", outputs[i].key, outputs[j].key));
}

}  // namespace moe
