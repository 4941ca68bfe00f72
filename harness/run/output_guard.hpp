// The one check every command makes of its output paths before any work (docs/reliability.md "Bad input", "Output
// paths"): each output is a path this process can write (fixtures/atomic_file.hpp: check_output_path,
// check_output_dir), within the name limits of the file system with room for the temporary file of its atomic write
// (a component of at most NAME_MAX bytes, the whole path below PATH_MAX), and no output is, or would replace, an input
// or another output. An output is the same file as an input when both exist and share device and inode (a hard
// link, a symlink, `./x` for `x`), or when their resolved paths (realpath of the nearest existing directory, the
// rest appended) are equal. Every refusal is bad input (exit 2) naming the output's option and, for a clash, the
// input's option too.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace moe {

// The bytes an atomic write appends to a file's name for its temporary file: ".tmp." and a pid of up to 10 digits.
inline constexpr std::size_t kTempSuffixBytes = 15;

class OutputGuard {
 public:
  // A file or directory the command reads; an empty path is ignored.
  OutputGuard& input(const std::filesystem::path& path, std::string key);
  // A file written whole (temporary file and rename); an empty path is ignored.
  OutputGuard& output_file(const std::filesystem::path& path, std::string key);
  // A directory the command writes `files` into (created when missing); each file counts as an output of `key`.
  OutputGuard& output_dir(const std::filesystem::path& path, std::string key, std::vector<std::string> files);
  // Throws moe::Error(bad_input) at the first refusal; checks nothing twice.
  void check() const;

 private:
  struct Named {
    std::filesystem::path path;
    std::string key;
  };
  std::vector<Named> inputs_, files_, dirs_;
  std::vector<std::vector<std::string>> dir_files_;
};

// The name limits alone: each component of `path` at most NAME_MAX bytes (the last one with `reserve` more for a
// temporary file's suffix), the absolute path plus `reserve` below PATH_MAX. Bad input naming `key`.
void check_path_limits(const std::filesystem::path& path, const std::string& key, std::size_t reserve);

}  // namespace moe
