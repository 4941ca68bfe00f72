// The report directory of one run: the one asked for, or reports-out/<UTC time in ISO 8601's basic format, e.g.
// 20261201T085213Z: no ':', which CI artifact uploaders refuse>, with -2, -3, ... when another run took that second's
// name (claimed with mkdir, so two runs never share one). It is claimed before GoogleTest reads its flags (the JUnit
// path is one of them); unless keep() is called, the directories it created are removed again when still empty, so a
// usage error or --gtest_list_tests leaves nothing behind.
#pragma once
#include <filesystem>
#include <vector>

namespace moe {

class ReportDir {
 public:
  explicit ReportDir(const std::filesystem::path& asked);  // empty: the default under reports-out/
  ~ReportDir();
  ReportDir(const ReportDir&) = delete;
  ReportDir& operator=(const ReportDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void keep() { created_.clear(); }

 private:
  std::filesystem::path path_;
  std::vector<std::filesystem::path> created_;  // the leaf first
};

}  // namespace moe
