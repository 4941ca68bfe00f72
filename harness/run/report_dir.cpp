#include "harness/run/report_dir.hpp"

#include <ctime>
#include <string>

namespace moe {

ReportDir::ReportDir(const std::filesystem::path& asked) {
  namespace fs = std::filesystem;
  if (!asked.empty()) {
    for (fs::path p = fs::absolute(asked); !fs::exists(p); p = p.parent_path()) created_.push_back(p);
    fs::create_directories(asked);
    path_ = asked;
    return;
  }
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  const fs::path root = "reports-out", base = root / stamp;
  const bool new_root = !fs::exists(root);
  fs::create_directories(root);
  for (int i = 1; path_.empty(); ++i) {
    const fs::path d = i == 1 ? base : fs::path(base.string() + "-" + std::to_string(i));
    if (fs::create_directory(d)) path_ = d;
  }
  created_.push_back(path_);
  if (new_root) created_.push_back(root);
}

ReportDir::~ReportDir() {
  for (const auto& p : created_) {
    std::error_code ec;
    std::filesystem::remove(p, ec);  // only an empty directory goes
  }
}

}  // namespace moe
