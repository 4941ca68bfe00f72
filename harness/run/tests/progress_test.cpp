// The pieces of the terminal recap (harness/run/progress.hpp) and the GoogleTest names (harness/run/runner.hpp), against
// independent sources: the shell reads a quoted word back, GoogleTest's filter selects a name.
#include <gtest/gtest.h>

#include <cstdio>
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

TEST(GtestNames, DashAndColonBecomeUnderscore_NothingElseChanges) {
  EXPECT_EQ(gtest_test_name("host-contract"), "host_contract");
  EXPECT_EQ(gtest_test_name("qwen3.5-35b-a3b/tp4/bf16.a16+sh.bf16.a16-sep/silu/T3/decode/atomic"),
            "qwen3.5_35b_a3b/tp4/bf16.a16+sh.bf16.a16_sep/silu/T3/decode/atomic");
  EXPECT_EQ(gtest_test_name("a:b"), "a_b");
}

}  // namespace
}  // namespace moe
