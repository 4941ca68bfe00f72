// The pieces of the terminal recap (harness/run/progress.hpp) and the GoogleTest names (harness/run/runner.hpp), against
// independent sources: the shell reads a quoted word back, GoogleTest's filter selects a name.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness/run/progress.hpp"
#include "harness/run/runner.hpp"

namespace moe {
namespace {

std::string shell_echo(const std::string& word) {
  // printf %s prints its argument as the shell parsed it.
  FILE* p = ::popen(("printf %s " + word).c_str(), "r");
  std::string out;
  char buf[256];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  return out;
}

TEST(ShellQuote, TheShellReadsEveryWordBackUnchanged) {
  for (const std::string s : {"custom-h256/tp1/bf16.a16+sh.bf16.a16-sep/silu/T5/decode/per_k", "it's", "a b",
                              "$HOME", "*T16*", "back\\slash", "semi;colon", "`x`", "\"q\"", "tab\there", "-lead"})
    EXPECT_EQ(shell_echo(shell_quote(s)), s) << s;
}

TEST(ShellQuote, PlainIdsStayReadable) {
  EXPECT_EQ(shell_quote("qwen3.5-35b-a3b/tp4/fp8ch.tok+sh.fp8ch.tok/silu/T3/decode/atomic"),
            "qwen3.5-35b-a3b/tp4/fp8ch.tok+sh.fp8ch.tok/silu/T3/decode/atomic");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(SkipGroups, ReasonsDifferingOnlyInNumbersShareAGroup_OthersDoNot) {
  auto rec = [](std::string kernel, std::string reason) {
    CaseRecord r;
    r.kernel = std::move(kernel);
    r.reason = std::move(reason);
    return r;
  };
  EXPECT_EQ(skip_group_key(rec("host-contract", "work 3.77e+07 FLOP is above the host kernel's budget 3e+07 FLOP")),
            skip_group_key(rec("host-contract", "work 5.03e+07 FLOP is above the host kernel's budget 3e+07 FLOP")));
  EXPECT_EQ(skip_group_key(rec("gpu-fused-moe", "device arch gfx942 not in the case targets [gfx950]")),
            skip_group_key(rec("gpu-fused-moe", "device arch gfx950 not in the case targets [gfx942]")));
  EXPECT_NE(skip_group_key(rec("host-contract", "no GPU: x")), skip_group_key(rec("gpu-fused-moe", "no GPU: x")));
  EXPECT_NE(skip_group_key(rec("k", "the case lists kernels [a], not k")),
            skip_group_key(rec("k", "k does not support this case: bf16 only")));
}

std::string recap(const std::vector<CaseRecord>& cases) {
  char* buf = nullptr;
  std::size_t len = 0;
  FILE* f = ::open_memstream(&buf, &len);
  print_recap(f, cases, RerunRecipe{});
  std::fclose(f);
  std::string s(buf, len);
  std::free(buf);
  return s;
}

// A failing case on the terminal as pytest prints it: where the case is and the verdict's details (metrics, worst
// tokens with their experts and weights, the statistics with the failed one marked), as the judge wrote them.
TEST(Recap, AFailurePrintsWhereItIsAndItsDetails) {
  CaseRecord r;
  r.id = "custom/T3/decode";
  r.kernel = "my-kernel";
  r.status = Status::fail;
  r.failed_check = Check::min_cos;
  r.reason = "min_cos: token 2 cos 0.91 < 0.9999";
  r.source = "cases/x.yaml:7";
  r.details = "  min_cos 0.910000 (token 2)\n  worst tokens (token: cos, rel, experts, weights):\n"
              "    2: cos 0.910000, rel 4.100e-01, experts [3, 5], weights [0.7000, 0.3000]\n"
              "    expert: z -10.85 (threshold 6), gain difference -5.112e-01 (floor 5.0e-03) at expert 3: FAIL";
  const std::string s = recap({r});
  EXPECT_NE(s.find("FAIL my-kernel custom/T3/decode: min_cos: token 2 cos 0.91 < 0.9999 [min_cos]\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  case: cases/x.yaml:7\n"), std::string::npos) << s;
  EXPECT_NE(s.find("    2: cos 0.910000, rel 4.100e-01, experts [3, 5], weights [0.7000, 0.3000]\n"), std::string::npos) << s;
  // The details end without a newline here: the recap ends the line before the next one.
  EXPECT_NE(s.find("at expert 3: FAIL\n"), std::string::npos) << s;
}

// Past ten failures the rest are one line each, pointing at the reports.
TEST(Recap, PastTenFailuresTheRestAreOneLineEach) {
  std::vector<CaseRecord> cases(12);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    cases[i].id = "c" + std::to_string(i);
    cases[i].kernel = "k";
    cases[i].status = Status::fail;
    cases[i].reason = "r";
    cases[i].details = "  detail of c" + std::to_string(i) + "\n";
  }
  const std::string s = recap(cases);
  EXPECT_NE(s.find("detail of c9\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("detail of c10"), std::string::npos) << s;
  EXPECT_NE(s.find("FAIL k c11: r\n"), std::string::npos) << s;
  EXPECT_NE(s.find("(the details of this and later failures: report.json and report.html)"), std::string::npos) << s;
}

TEST(GtestNames, DashAndColonBecomeUnderscore_NothingElseChanges) {
  EXPECT_EQ(gtest_test_name("host-contract"), "host_contract");
  EXPECT_EQ(gtest_test_name("qwen3.5-35b-a3b/tp4/bf16.a16+sh.bf16.a16-sep/silu/T3/decode/atomic"),
            "qwen3.5_35b_a3b/tp4/bf16.a16+sh.bf16.a16_sep/silu/T3/decode/atomic");
  EXPECT_EQ(gtest_test_name("a:b"), "a_b");
}

}  // namespace
}  // namespace moe
