#include "harness/run/report_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>

#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/tuning/table_set.hpp"

namespace moe {

namespace fs = std::filesystem;

namespace report_dir_lock {  // named: the unity build joins this file with others

std::string own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& c : s)
    if (c == '\0' || c == '\n') c = ' ';
  return s;
}

// The holder's "pid N" and "command ..." lines as one phrase ("pid 123: moe-harness run ...").
std::string holder_of(int fd) {
  std::string text(4096, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? std::size_t(n) : 0);
  std::string pid, command;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (line.rfind("pid ", 0) == 0) pid = line.substr(4);
    if (line.rfind("command ", 0) == 0) command = line.substr(8);
  }
  if (pid.empty()) return "";
  return "pid " + pid + " (" + (command.empty() ? "command line unknown" : command) + ")";
}

}  // namespace report_dir_lock


ReportDirLock::ReportDirLock(const fs::path& dir, const std::string& key) : file_(dir / kReportDirLockFile) {
  const std::string fix = "wait for that run to end, or give this one another report directory";
  for (;;) {
    fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ < 0)
      throw_bad_input(dir.string(), key, std::string("cannot create the lock file ") + kReportDirLockFile + ": " +
                                             std::strerror(errno),
                      "give a report directory you can write");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string holder = report_dir_lock::holder_of(fd_);
      ::close(fd_);
      fd_ = -1;
      if (err == EWOULDBLOCK)
        throw_bad_input(dir.string(), key,
                        "another run is writing into this report directory: " +
                            (holder.empty() ? std::string("a process that has not yet named itself") : holder),
                        fix);
      throw_bad_input(dir.string(), key, std::string("cannot lock ") + kReportDirLockFile + ": " + std::strerror(err),
                      fix);
    }
    // The holder before us removes the file as it releases it: the lock counts only on the file the path still names.
    struct stat held{}, named{};
    if (::fstat(fd_, &held) == 0 && ::stat(file_.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      break;
    ::close(fd_);
    fd_ = -1;
  }
  if (const std::string stale = report_dir_lock::holder_of(fd_); !stale.empty())
    std::fprintf(stderr, "moe-harness: %s: took over the report directory from %s, which ended without releasing it "
                 "(killed?)\n",
                 dir.c_str(), stale.c_str());
  const std::string me =
      "pid " + std::to_string(::getpid()) + "\ncommand " + report_dir_lock::own_command_line() + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) != ssize_t(me.size()))
    std::fprintf(stderr, "moe-harness: %s: could not write the holder into the lock file: %s\n", file_.c_str(),
                 std::strerror(errno));
}

ReportDirLock::~ReportDirLock() { release(); }

void ReportDirLock::release() {
  if (fd_ < 0) return;
  ::unlink(file_.c_str());
  ::close(fd_);
  fd_ = -1;
}

ReportDir::ReportDir(const fs::path& asked) {
  if (!asked.empty()) {
    for (fs::path p = fs::absolute(asked); !fs::exists(p); p = p.parent_path()) created_.push_back(p);
    fs::create_directories(asked);
    path_ = asked;
  } else {
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
  try {
    lock_ = std::make_unique<ReportDirLock>(path_, "--report-dir");
  } catch (...) {
    for (const auto& p : created_) {
      std::error_code ec;
      fs::remove(p, ec);
    }
    throw;
  }
}

ReportDir::~ReportDir() {
  lock_.reset();  // the lock file first: the directories below go only when empty
  for (const auto& p : created_) {
    std::error_code ec;
    fs::remove(p, ec);  // only an empty directory goes
  }
}

std::vector<std::string> report_dir_files(const RunOptions& o) {
  std::vector<std::string> files = {"journal.jsonl", "summary.md", "report.html", kReportDirLockFile};
  if (o.json.empty()) files.push_back("report.json");
  if (o.junit.empty()) files.push_back("junit.xml");
  return files;
}

OutputGuard run_output_guard(const RunOptions& o) {
  OutputGuard g;
  g.input(resolve_suite(o.suite), "--suite");
  if (!o.dispatch_table.empty())
    for (const std::string& t : split_table_paths({o.dispatch_table.string()})) g.input(t, "--dispatch-table");
  for (const std::string& p : o.plugins) g.input(p, "--plugin");
  // The default directory is a new one under reports-out/: nothing in it can be an input.
  if (o.report_dir.empty()) g.output_dir("reports-out", "--report-dir", {});
  else g.output_dir(o.report_dir, "--report-dir", report_dir_files(o));
  g.output_file(o.junit, "--junit").output_file(o.json, "--json");
  return g;
}

}  // namespace moe
