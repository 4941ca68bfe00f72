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

// A kernel as a float-atomic reduce makes it: `inner`'s output with one bf16 ulp moved on about half of the finite,
// non-zero elements, a different half on each call (two runs never agree bit for bit), and non-determinism declared.
class OneUlpNondeterministic final : public KernelUnderTest {
 public:
  explicit OneUlpNondeterministic(std::unique_ptr<KernelUnderTest> inner) : in_(std::move(inner)) {}
  std::string id() const override { return in_->id() + "+ulp-noise"; }
  std::string version() const override { return in_->version(); }
  bool needs_device() const override { return false; }
  Support supports(const ProblemSpec& p, const DeviceInfo* d) const override { return in_->supports(p, d); }
  void prepare(const ProblemSpec& p, Checkpoint& w) override { in_->prepare(p, w); }
  RunInfo run(const ProblemSpec& p, const Checkpoint& w, const RoutingResult& r, Tensor& out) override {
    RunInfo info = in_->run(p, w, r, out);
    auto v = out.span<std::uint16_t>();
    for (std::size_t i = 0; i < v.size(); ++i)
      if (((i * 2654435761u + calls_ * 40503u) >> 11) % 2 == 0 && (v[i] & 0x7F80u) != 0x7F80u && (v[i] & 0x7FFFu) != 0)
        v[i] ^= 1u;
    ++calls_;
    return info;
  }
  RoundingContract rounding_contract(const ProblemSpec& p) const override { return in_->rounding_contract(p); }
  bool deterministic(const ProblemSpec&) const override { return false; }
  void end_case() override { in_->end_case(); }

 private:
  std::unique_ptr<KernelUnderTest> in_;
  std::size_t calls_ = 0;
};
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

namespace moe {
// A non-deterministic kernel: token isolation compares each valid row within 1e-2 of its norm (finiteness exactly);
// one ulp of noise on half the elements passes it, a kernel reading the poisoned padding row does not.
TEST(TokenProbes, IsolationHoldsANonDeterministicKernelToItsRowsWithinABound) {
  for (const CaseSpec& c : probe_suite().cases) {
    OneUlpNondeterministic k(make_kernel_by_id("host-contract", 0, {}));
    const CaseRecord r = execute_case(c, k, DeviceDetection{}, {});
    EXPECT_EQ(r.status, Status::pass) << c.id << ": " << r.reason;
    EXPECT_EQ(probe(r, "token_isolation"), "ran") << c.id;
    EXPECT_EQ(probe(r, "red_zones"), "ran") << c.id;
    EXPECT_EQ(probe(r, "token_permutation").rfind("not run: the kernel declares itself non-deterministic", 0), 0u) << c.id;
    EXPECT_EQ(r.metrics.at("token_isolation_rows_apart"), 0.0) << c.id;
    EXPECT_GT(r.metrics.at("token_isolation_max_row_rel"), 0.0) << c.id;  // compared within the bound, not for bits
    EXPECT_LT(r.metrics.at("token_isolation_max_row_rel"), 1e-2) << c.id;
    EXPECT_EQ(r.metrics.count("token_probe_mismatches"), 0u) << c.id;

    OneUlpNondeterministic bad(make_kernel_by_id("host-contract~reads_next_token_row", 0, {}));
    const CaseRecord b = execute_case(c, bad, DeviceDetection{}, {});
    EXPECT_EQ(b.failed_check, Check::token_isolation) << c.id << ": " << b.reason;
    EXPECT_NE(b.reason.find("1 valid token row(s)"), std::string::npos) << b.reason;
    EXPECT_NE(b.reason.find("not bit for bit"), std::string::npos) << b.reason;
  }
}
}  // namespace moe

namespace moe {
// Tokens with no slot on this rank (and no shared expert here): their x rows are poisoned too. On an ep_rank_empty
// case off rank 0 that is every token; the correct kernel writes zeros for them without reading x, the mutant that
// reads its own row does not.
TEST(TokenProbes, IsolationPoisonsTheRowsOfTokensWithNoSlotOnThisRank) {
  const Suite s = load_suite_text(R"(suite: t
defaults: {hidden: 128, inter: 128, experts: 8, topk: 3, tokens: 5}
cases:
  - {ep: 2, ep_rank: 1, routing: {edge: ep_rank_empty}}
  - {ep: 2, ep_rank: 0, n_shared: 1, shared_inter: 64, routing: {edge: ep_rank_empty}}
  - {tokens: 6}
)", "t.yaml");
  const double want_masked[] = {5, 0, 0};  // every token; none (the shared expert reads them); none (ep 1)
  PipelineOptions off;
  off.token_probes = false;
  for (std::size_t i = 0; i < s.cases.size(); ++i) {
    const CaseSpec& c = s.cases[i];
    HostContractKernel k;
    const CaseRecord r = execute_case(c, k, DeviceDetection{}, {});
    EXPECT_EQ(r.status, Status::pass) << c.id << ": " << r.reason;
    EXPECT_EQ(probe(r, "token_isolation"), "ran") << c.id;
    EXPECT_EQ(r.metrics.at("token_isolation_masked_rows"), want_masked[i]) << c.id;

    const auto bad = make_kernel_by_id("host-contract~masked_token_read", 0, {});
    EXPECT_EQ(execute_case(c, *bad, DeviceDetection{}, off).status, Status::pass) << c.id;
    const CaseRecord b = execute_case(c, *bad, DeviceDetection{}, {});
    if (want_masked[i] > 0) {
      EXPECT_EQ(b.failed_check, Check::token_isolation) << c.id << ": " << b.reason;
      EXPECT_NE(b.reason.find("in the x rows of the 5 token(s) with no slot on this rank"), std::string::npos) << b.reason;
    } else {
      EXPECT_EQ(b.status, Status::pass) << c.id << ": " << b.reason;  // nothing poisoned: nothing to see
    }
  }
}
}  // namespace moe

namespace moe {
namespace {
// A kernel whose device buffers' guards a run changes, as a GPU kernel writing one bf16 element past its device output
// reports them (KernelUnderTest::device_red_zone_violations): two bytes per run, kept until end_case().
class WritesPastDeviceOutput final : public KernelUnderTest {
 public:
  WritesPastDeviceOutput(std::unique_ptr<KernelUnderTest> inner, bool writes, bool deterministic)
      : in_(std::move(inner)), writes_(writes), deterministic_(deterministic) {}
  std::string id() const override { return in_->id() + "+device-guards"; }
  std::string version() const override { return in_->version(); }
  bool needs_device() const override { return false; }
  Support supports(const ProblemSpec& p, const DeviceInfo* d) const override { return in_->supports(p, d); }
  void prepare(const ProblemSpec& p, Checkpoint& w) override { in_->prepare(p, w); }
  RunInfo run(const ProblemSpec& p, const Checkpoint& w, const RoutingResult& r, Tensor& out) override {
    if (writes_) zones_.push_back("device out: 2 byte(s) after the end changed, first at +0"), bytes_ += 2;
    return in_->run(p, w, r, out);
  }
  RoundingContract rounding_contract(const ProblemSpec& p) const override { return in_->rounding_contract(p); }
  bool deterministic(const ProblemSpec&) const override { return deterministic_; }
  void end_case() override {
    zones_.clear();
    bytes_ = 0;
    in_->end_case();
  }
  std::vector<std::string> device_red_zone_violations(std::int64_t& bytes) const override {
    bytes += bytes_;
    return zones_;
  }

 private:
  std::unique_ptr<KernelUnderTest> in_;
  bool writes_, deterministic_;
  std::vector<std::string> zones_;
  std::int64_t bytes_ = 0;
};
}  // namespace

// red_zones adds the device guards' violations of its own run (the case's earlier runs were ended before it) to the
// host ones, names them, and counts both in red_zone_bytes; the same where the kernel is non-deterministic.
TEST(TokenProbes, RedZonesReportTheDeviceGuardsOfTheProbeRun) {
  for (const bool det : {true, false})
    for (const CaseSpec& c : probe_suite().cases) {
      WritesPastDeviceOutput clean(make_kernel_by_id("host-contract", 0, {}), false, det);
      const CaseRecord ok = execute_case(c, clean, DeviceDetection{}, {});
      EXPECT_EQ(ok.status, Status::pass) << c.id << ": " << ok.reason;
      EXPECT_EQ(ok.metrics.at("red_zone_bytes"), 0.0) << c.id;

      WritesPastDeviceOutput bad(make_kernel_by_id("host-contract", 0, {}), true, det);
      const CaseRecord r = execute_case(c, bad, DeviceDetection{}, {});
      EXPECT_EQ(r.failed_check, Check::red_zone) << c.id << ": " << r.reason;
      EXPECT_EQ(r.reason, "red zones: device out: 2 byte(s) after the end changed, first at +0") << c.id;
      EXPECT_EQ(r.metrics.at("red_zone_bytes"), 2.0) << c.id;  // the probe run's alone

      WritesPastDeviceOutput both(make_kernel_by_id("host-contract~writes_past_output", 0, {}), true, det);
      const CaseRecord b = execute_case(c, both, DeviceDetection{}, {});
      EXPECT_EQ(b.failed_check, Check::red_zone) << c.id << ": " << b.reason;
      EXPECT_NE(b.reason.find("out_token_probe: "), std::string::npos) << b.reason;
      EXPECT_NE(b.reason.find("; device out: 2 byte(s) after the end changed"), std::string::npos) << b.reason;
      EXPECT_GT(b.metrics.at("red_zone_bytes"), 2.0) << c.id;  // the host guard's bytes and the device's
    }
}
}  // namespace moe
