// The output guard (harness/run/output_guard.hpp) and the report directory's lock (harness/run/report_dir.hpp).
#include "harness/run/output_guard.hpp"

#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fixtures/error.hpp"
#include "harness/run/report_dir.hpp"

namespace moe {
namespace {

namespace fs = std::filesystem;

class OutputGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "moe-guard-XXXXXX").string();
    ASSERT_NE(::mkdtemp(t.data()), nullptr);
    dir = t;
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path file(const std::string& name, const std::string& text = "x") {
    std::ofstream(dir / name) << text;
    return dir / name;
  }
  fs::path dir;
};

// The refusal's exit code, option and message part, or "" when the guard let it through.
std::string refusal(const OutputGuard& g) {
  try {
    g.check();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    return e.key() + ": " + e.problem();
  }
  return "";
}

TEST_F(OutputGuardTest, OutputThatIsAnInput_IsRefusedNamingBothOptions) {
  const fs::path t = file("t.csv");
  const std::string r = refusal(OutputGuard().input(t, "tables").output_file(t, "--lock"));
  EXPECT_NE(r.find("--lock: "), std::string::npos) << r;
  EXPECT_NE(r.find("(tables)"), std::string::npos) << r;
  std::ifstream in(t);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "x");  // untouched
}

TEST_F(OutputGuardTest, SameFileUnderAnotherName_IsRefused) {
  const fs::path t = file("t.csv");
  fs::create_symlink(t, dir / "link.csv");
  fs::create_hard_link(t, dir / "hard.csv");
  fs::create_directory(dir / "sub");
  EXPECT_NE(refusal(OutputGuard().input(t, "IN").output_file(dir / "link.csv", "--out")), "");
  EXPECT_NE(refusal(OutputGuard().input(t, "IN").output_file(dir / "hard.csv", "--out")), "");
  EXPECT_NE(refusal(OutputGuard().input(t, "IN").output_file(dir / "sub" / ".." / "t.csv", "--out")), "");
  // The input named through a symlinked directory, the output through the real one.
  fs::create_directory_symlink(dir, dir / "sub" / "up");
  EXPECT_NE(refusal(OutputGuard().input(dir / "sub" / "up" / "t.csv", "IN").output_file(t, "--out")), "");
}

TEST_F(OutputGuardTest, AFileADirectoryOutputWrites_IsRefusedWhenItIsAnInput) {
  const fs::path suite = file("report.json");
  const std::string r = refusal(OutputGuard().input(suite, "--suite").output_dir(dir, "--report-dir", {"report.json"}));
  EXPECT_NE(r.find("--report-dir: "), std::string::npos) << r;
  EXPECT_NE(r.find("(--suite)"), std::string::npos) << r;
  EXPECT_EQ(refusal(OutputGuard().input(suite, "--suite").output_dir(dir, "--report-dir", {"summary.md"})), "");
}

TEST_F(OutputGuardTest, TwoOutputsOfOneFile_AreRefused) {
  const std::string r =
      refusal(OutputGuard().output_file(dir / "x.json", "--json").output_file(dir / "x.json", "--markdown"));
  EXPECT_NE(r.find("--json and --markdown"), std::string::npos) << r;
}

TEST_F(OutputGuardTest, DistinctPathsAndMissingInputs_Pass) {
  const fs::path a = file("a.json"), b = file("b.json");
  EXPECT_EQ(refusal(OutputGuard().input(a, "BASE").input(b, "NEW").output_file(dir / "c.json", "--json")), "");
  // An input that does not exist is its reader's to refuse: the guard does not call it a clash.
  EXPECT_EQ(refusal(OutputGuard().input(dir / "none.json", "BASE").output_file(dir / "none2.json", "--json")), "");
}

TEST_F(OutputGuardTest, NameLimits_LeaveRoomForTheTemporaryFile) {
  // NAME_MAX 255 on Linux; the atomic write appends ".tmp.PID", up to 15 bytes: 240 is the longest file name.
  ASSERT_EQ(NAME_MAX, 255);
  EXPECT_EQ(refusal(OutputGuard().output_file(dir / std::string(240, 'a'), "--junit")), "");
  const std::string r = refusal(OutputGuard().output_file(dir / std::string(241, 'a'), "--junit"));
  EXPECT_NE(r.find("--junit: "), std::string::npos) << r;
  EXPECT_NE(r.find("241 bytes"), std::string::npos) << r;
  EXPECT_NE(refusal(OutputGuard().output_file(dir / std::string(300, 'a') / "x.xml", "--junit")), "");
  // A directory's own name may be 255 bytes, no more.
  EXPECT_NE(refusal(OutputGuard().output_dir(dir / std::string(256, 'd'), "--report-dir", {})), "");
}

TEST_F(OutputGuardTest, PathLimit_IsPATH_MAXAsAnAbsolutePath) {
  ASSERT_EQ(PATH_MAX, 4096);
  fs::path deep = dir;
  while (deep.string().size() < 4096) deep /= std::string(200, 'p');
  const std::string r = refusal(OutputGuard().output_dir(deep, "--report-dir", {}));
  EXPECT_NE(r.find("--report-dir: "), std::string::npos) << r;
  EXPECT_NE(r.find("PATH_MAX"), std::string::npos) << r;
}

TEST_F(OutputGuardTest, ReportDirLock_ASecondHolderIsRefusedNamingTheFirst) {
  std::string held;
  {
    const ReportDirLock first(dir, "--report-dir");
    try {
      const ReportDirLock second(dir, "--report-dir");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      EXPECT_EQ(e.key(), "--report-dir");
      held = e.problem();
    }
    EXPECT_NE(held.find("pid " + std::to_string(::getpid()) + " ("), std::string::npos) << held;
  }
  EXPECT_FALSE(fs::exists(dir / kReportDirLockFile));  // released: the next run takes it without a notice
  const ReportDirLock again(dir, "--report-dir");
  EXPECT_TRUE(fs::exists(dir / kReportDirLockFile));
}

TEST_F(OutputGuardTest, ReportDirLock_AFileWithoutAHolderIsTakenOver) {
  file(kReportDirLockFile, "pid 999999999\ncommand moe-harness run --killed\n");
  testing::internal::CaptureStderr();
  { const ReportDirLock lock(dir, "--report-dir"); }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("took over the report directory from pid 999999999 (moe-harness run --killed)"), std::string::npos)
      << err;
}

}  // namespace
}  // namespace moe
