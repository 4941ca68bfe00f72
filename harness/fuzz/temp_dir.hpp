// A private directory for fuzzing readers that take a directory and read a fixed file name in it (the run journal,
// the export index): each input is written there as that file, and the reader is given the directory.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace moe::fuzz {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/moe-fuzz-XXXXXX";
    if (!::mkdtemp(tmpl)) { std::perror("mkdtemp"); std::abort(); }
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // Writes these bytes as DIR/name; returns DIR.
  const std::string& hold(const std::string& name, const std::uint8_t* data, std::size_t size) {
    std::ofstream out(path_ + "/" + name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    if (!out) { std::perror("write"); std::abort(); }
    return path_;
  }

 private:
  std::string path_;
};

}  // namespace moe::fuzz
