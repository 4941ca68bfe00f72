// The token probes (harness/pipeline/token_probes.hpp) on the host contract kernel: all four run and see nothing on
// the correct kernel, and each catches its mutant of the catalog, which passes the verdict without them.
#include <gtest/gtest.h>

#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/run/kernel_registry.hpp"
#include "kernels/host/host_contract_kernel.hpp"

namespace moe {
namespace {
Suite probe_suite() {
  return load_suite_text(R"(suite: t
defaults: {hidden: 128, inter: 128, experts: 8, topk: 3}
cases:
  - {tokens: 6}
  - {tokens: 5, quant: {weight: fp8_channel, act: fp8_token}, n_shared: 1, shared_inter: 64}
  - {tokens: 4, routing: {edge: duplicate_id}}
)", "t.yaml");
}
std::string probe(const CaseRecord& r, const std::string& name) {
  for (const auto& [n, s] : r.probes) if (n == name) return s;
  return "(absent)";
}
}  // namespace

TEST(TokenProbes, RunAndFindNothingOnTheCorrectKernel) {
  HostContractKernel k;
  for (const CaseSpec& c : probe_suite().cases) {
    const CaseRecord r = execute_case(c, k, DeviceDetection{}, {});
    EXPECT_EQ(r.status, Status::pass) << c.id << ": " << r.reason;
    for (const char* p : {"token_isolation", "red_zones", "token_permutation", "expert_relabeling"})
      EXPECT_EQ(probe(r, p), "ran") << c.id << " " << p;
    EXPECT_EQ(r.metrics.at("token_probe_mismatches"), 0.0) << c.id;
    EXPECT_EQ(r.metrics.at("red_zone_bytes"), 0.0) << c.id;
  }
}

TEST(TokenProbes, TurnedOffTheyDoNotRunAndSaySo) {
  HostContractKernel k;
  PipelineOptions off;
  off.token_probes = false;
  const CaseRecord r = execute_case(probe_suite().cases[0], k, DeviceDetection{}, off);
  EXPECT_EQ(r.status, Status::pass);
  EXPECT_EQ(probe(r, "red_zones"), "not run: turned off for this command");
  EXPECT_EQ(r.metrics.count("red_zone_bytes"), 0u);
}

TEST(TokenProbes, OneTokenHasNothingToPermute) {
  HostContractKernel k;
  const Suite s = load_suite_text("suite: t\ncases:\n  - {hidden: 128, inter: 128, experts: 8, topk: 2, tokens: 1}\n", "t.yaml");
  const CaseRecord r = execute_case(s.cases[0], k, DeviceDetection{}, {});
  EXPECT_EQ(r.status, Status::pass) << r.reason;
  EXPECT_EQ(probe(r, "token_permutation"), "not run: one token: nothing to permute");
  EXPECT_EQ(probe(r, "token_isolation"), "ran");
}

// Each probe's mutant passes every check of the verdict (and the structural probes) and fails on its probe alone.
TEST(TokenProbes, EachCatchesItsMutantAndNothingElseDoes) {
  struct Want { const char* mutant; Check check; const char* reason; };
  const Want wants[] = {
      {"reads_next_token_row", Check::token_isolation, "NaN, Inf and huge rows past token"},
      {"writes_past_output", Check::red_zone, "byte(s) written after it, the first 0 byte(s) past its end"},
      {"token_position_dependent", Check::token_permutation, "tokens rotated by one position"},
      {"expert_label_dependent", Check::expert_relabeling, "relabeled as each other"},
  };
  PipelineOptions off;
  off.token_probes = false;
  for (const Want& w : wants) {
    const auto k = make_kernel_by_id(std::string("host-contract~") + w.mutant, 0, {});
    for (const CaseSpec& c : probe_suite().cases) {
      EXPECT_EQ(execute_case(c, *k, DeviceDetection{}, off).status, Status::pass) << w.mutant << " " << c.id;
      const CaseRecord r = execute_case(c, *k, DeviceDetection{}, {});
      EXPECT_EQ(r.failed_check, w.check) << w.mutant << " " << c.id << ": " << r.reason;
      EXPECT_NE(r.reason.find(w.reason), std::string::npos) << r.reason;
      if (w.check == Check::red_zone) {
        EXPECT_NE(r.reason.find("red zones: out_token_probe: "), std::string::npos) << r.reason;
      }
    }
  }
}

}  // namespace moe
