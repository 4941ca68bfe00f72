// The public API (harness/include/moe_harness/) on the smoke suite with the host contract kernel, each function
// checked against what the code below it computes directly or what its documentation states.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <moe_harness/moe_harness.hpp>

#include "fixtures/checkpoint.hpp"
#include "reference/moe/reference_moe.hpp"
#include "reference/routing/routing.hpp"

namespace api = moe::api;

namespace {

const api::Suite& smoke() {
  static const api::Suite s = api::load_suite("smoke");
  return s;
}

// The first bf16-output statistical case of the smoke suite.
const api::CaseSpec& bf16_case() {
  for (const api::CaseSpec& c : smoke().cases)
    if (c.problem.output_dtype == api::DType::bf16 && c.tier == api::Tier::statistical) return c;
  throw std::runtime_error("smoke has no bf16 case");
}

// The contract reference as bf16: its values are rounded to the output dtype already (docs/numerics.md), so the
// low 16 bits of each float are zero and dropping them is exact.
api::Tensor as_bf16(const moe::Values& ref, std::int64_t t, std::int64_t h) {
  api::Tensor out("out", api::DType::bf16, {t, h});
  auto* o = out.span<std::uint16_t>().data();
  for (std::size_t i = 0; i < ref.size(); ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &ref[i], 4);
    EXPECT_EQ(bits & 0xffffu, 0u) << "element " << i << " is not a bf16 value";
    o[i] = std::uint16_t(bits >> 16);
  }
  return out;
}

}  // namespace

TEST(Api, ResolveSuiteNamesTheSourceTreesFile) {
  EXPECT_EQ(std::filesystem::weakly_canonical(api::resolve_suite("smoke")),
            std::filesystem::weakly_canonical(std::filesystem::path(MOE_ROOT) / "cases/smoke.yaml"));
  EXPECT_EQ(api::resolve_suite("dir/x.yaml"), std::filesystem::path("dir/x.yaml"));
}

TEST(Api, LoadSuiteFiltersByIdGlobs) {
  const api::Suite& all = smoke();
  ASSERT_GT(all.cases.size(), 3u);
  EXPECT_EQ(all.name, "smoke");
  const std::string id = all.cases[1].id;
  const api::Suite one = api::load_suite("smoke", {id});
  ASSERT_EQ(one.cases.size(), 1u);
  EXPECT_EQ(one.cases[0].id, id);
  const api::Suite rest = api::load_suite("smoke", {"-" + id});
  EXPECT_EQ(rest.cases.size(), all.cases.size() - 1);
  for (const auto& c : rest.cases) EXPECT_NE(c.id, id);
  EXPECT_TRUE(api::load_suite("smoke", {"no-such-case*"}).cases.empty());
  EXPECT_TRUE(api::case_selected({"a*", "-ab"}, "ac"));
  EXPECT_FALSE(api::case_selected({"a*", "-ab"}, "ab"));
  EXPECT_EQ(&api::find_case(all, id), &all.cases[1]);
  EXPECT_NE(api::case_json(all.cases[1]).find("\"" + id + "\""), std::string::npos);
}

TEST(Api, BadInputThrowsWithExitCode2) {
  try {
    api::load_suite("/nonexistent/suite.yaml");
    FAIL() << "loaded a missing file";
  } catch (const api::Error& e) {
    EXPECT_EQ(e.code(), api::ExitCode::bad_input);
  }
  EXPECT_THROW(api::find_case(smoke(), "no/such/case"), api::Error);
}

TEST(Api, GateRunsHostCasesAndSkipsOtherKernelsCases) {
  const auto host = api::make_kernel("host");
  EXPECT_EQ(host->id(), "host-contract");
  const api::DeviceDetection none;  // no runtime, no device
  api::CaseSpec c = bf16_case();
  EXPECT_EQ(api::gate(c, *host, none).action, api::GateDecision::Action::run);
  c.kernels = {"gpu-fused-moe"};
  const api::GateDecision g = api::gate(c, *host, none);
  EXPECT_EQ(g.action, api::GateDecision::Action::skip);
  EXPECT_NE(g.reason.find("gpu-fused-moe"), std::string::npos) << g.reason;
  bool has_host = false;
  for (const auto& k : api::make_kernels()) has_host |= k->id() == "host-contract";
  EXPECT_TRUE(has_host);
}

TEST(Api, FixtureIsTheGeneratedCheckpointAndItsFingerprint) {
  const api::CaseSpec& c = bf16_case();
  const api::Fixture f = api::make_fixture(c);
  EXPECT_EQ(f.fingerprint, moe::generate_checkpoint(c.problem).fingerprint());
  EXPECT_EQ(f.fingerprint, f.pristine.fingerprint());
  EXPECT_EQ(f.problem.seed, c.problem.seed);
  moe::ProblemSpec p = c.problem;
  p.seed = c.problem.seed + 17;
  const api::Fixture g = api::make_fixture(c, p.seed);
  EXPECT_EQ(g.problem.seed, p.seed);
  EXPECT_EQ(g.fingerprint, moe::generate_checkpoint(p).fingerprint());
  EXPECT_NE(g.fingerprint, f.fingerprint);
  api::WeightCache weights;
  EXPECT_EQ(api::make_fixture(c, {}, &weights).fingerprint, f.fingerprint);
}

TEST(Api, ReferencesAreTheEnginesAndTheCacheReturnsThem) {
  const api::CaseSpec& c = bf16_case();
  const api::Fixture f = api::make_fixture(c);
  const api::ReferenceSet r = api::compute_references(c, f);
  const moe::RoutingResult routing = moe::route(f.problem, f.pristine);
  const moe::Values contract = moe::reference_moe(f.problem, f.pristine, routing, moe::ReferenceKind::contract);
  EXPECT_EQ(r.routing.ids, routing.ids);
  ASSERT_EQ(r.contract.size(), contract.size());
  EXPECT_EQ(std::memcmp(r.contract.data(), contract.data(), contract.size() * 4), 0);
  const auto dir = std::filesystem::path(::testing::TempDir()) / "api-reference-cache";
  std::filesystem::remove_all(dir);
  api::ReferenceCache cache(dir);
  const api::ReferenceSet a = api::compute_references(c, f, &cache);
  const api::ReferenceSet b = api::compute_references(c, f, &cache);
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
  ASSERT_EQ(b.contract.size(), contract.size());
  EXPECT_EQ(std::memcmp(a.contract.data(), contract.data(), contract.size() * 4), 0);
  EXPECT_EQ(std::memcmp(b.contract.data(), contract.data(), contract.size() * 4), 0);
}

TEST(Api, JudgeOfTheReferenceItselfPassesExactly) {
  const api::CaseSpec& c = bf16_case();
  const api::Fixture f = api::make_fixture(c);
  const api::ReferenceSet r = api::compute_references(c, f);
  const api::Tensor out = as_bf16(r.contract, f.problem.tokens, f.problem.hidden);
  const api::CaseRecord rec = api::judge(c, f, r, out, "mine");
  EXPECT_EQ(rec.status, api::Status::pass) << rec.reason;
  EXPECT_EQ(rec.failed_check, api::Check::none);
  EXPECT_EQ(rec.id, c.id);
  EXPECT_EQ(rec.kernel, "mine");
  EXPECT_EQ(rec.fixture_fingerprint, f.fingerprint);
  EXPECT_EQ(rec.metrics.at("max_rel"), 0.0);
  EXPECT_EQ(rec.metrics.at("max_abs"), 0.0);
  EXPECT_EQ(rec.metrics.at("threshold_min_cos"), api::thresholds(c).min_cos);
  ASSERT_EQ(rec.token_cos.size(), std::size_t(f.problem.tokens));
  ASSERT_EQ(rec.token_rel.size(), std::size_t(f.problem.tokens));
  for (double rel : rec.token_rel) EXPECT_EQ(rel, 0.0);
  // The nine systematic statistics of docs/judging.md, none with an error to test.
  ASSERT_EQ(rec.systematic.size(), 9u);
  for (const auto& st : rec.systematic)
    EXPECT_EQ(st.status, "not run: the output equals the reference element for element: no error to test") << st.name;
  // The same bytes as a raw buffer.
  const api::CaseRecord raw = api::judge(c, f, r, out.bytes(), out.nbytes(), api::DType::bf16);
  EXPECT_EQ(raw.status, api::Status::pass);
  EXPECT_EQ(raw.kernel, "external");
  EXPECT_EQ(raw.token_cos, rec.token_cos);
}

TEST(Api, JudgeOfAZeroedOrUnwrittenOutputFailsNamingTheCheck) {
  const api::CaseSpec& c = bf16_case();
  const api::Fixture f = api::make_fixture(c);
  const api::ReferenceSet r = api::compute_references(c, f);
  api::Tensor zero("out", api::DType::bf16, {f.problem.tokens, f.problem.hidden});  // zero-filled
  const api::CaseRecord z = api::judge(c, f, r, zero);
  EXPECT_EQ(z.status, api::Status::fail);
  EXPECT_EQ(z.failed_check, api::Check::zero_output);
  EXPECT_EQ(z.reason.rfind("zero_output: ", 0), 0u) << z.reason;
  std::vector<std::uint16_t> inf(std::size_t(f.problem.tokens * f.problem.hidden), 0x7f80);  // bf16 +inf
  moe::fill_sentinel(zero, 0);
  const api::CaseRecord u = api::judge(c, f, r, zero);
  EXPECT_EQ(u.failed_check, api::Check::unwritten);
  EXPECT_EQ(u.metrics.at("unwritten"), double(f.problem.tokens * f.problem.hidden));
  const api::CaseRecord n = api::judge(c, f, r, inf.data(), inf.size() * 2, api::DType::bf16);
  EXPECT_EQ(n.status, api::Status::fail);
  EXPECT_EQ(n.failed_check, api::Check::non_finite);
  EXPECT_EQ(n.metrics.at("non_finite"), double(inf.size()));
}

TEST(Api, JudgeRefusesAnOutputOfTheWrongShapeOrDtype) {
  const api::CaseSpec& c = bf16_case();
  const api::Fixture f = api::make_fixture(c);
  const api::ReferenceSet r = api::compute_references(c, f);
  const api::Tensor small("out", api::DType::bf16, {f.problem.tokens, f.problem.hidden - 1});
  EXPECT_THROW(api::judge(c, f, r, small), api::Error);
  const api::Tensor f32("out", api::DType::f32, {f.problem.tokens, f.problem.hidden});
  EXPECT_THROW(api::judge(c, f, r, f32), api::Error);
  std::vector<std::uint16_t> buf(3);
  EXPECT_THROW(api::judge(c, f, r, buf.data(), buf.size() * 2, api::DType::bf16), api::Error);
}

TEST(Api, NewOutputIsTheSentinelFilledBufferOfTheCasesOutputDtype) {
  // The sentinels of docs/judging.md: bf16 0x7FA5, f16 0x7DA5, f32 0x7FA5A5A5.
  const std::pair<api::DType, std::uint32_t> want[] = {
      {api::DType::bf16, 0x7FA5u}, {api::DType::f16, 0x7DA5u}, {api::DType::f32, 0x7FA5A5A5u}};
  for (const auto& [dtype, bits] : want) {
    api::ProblemSpec p = bf16_case().problem;
    p.output_dtype = dtype;
    const api::Tensor out = api::new_output(p);
    EXPECT_EQ(out.dtype(), dtype);
    EXPECT_EQ(out.shape(), (std::vector<std::int64_t>{p.tokens, p.hidden}));
    const std::size_t size = api::dtype_info(dtype).bytes;
    for (std::int64_t i = 0; i < out.numel(); ++i) {
      std::uint32_t v = 0;
      std::memcpy(&v, out.bytes() + i * size, size);
      ASSERT_EQ(v, bits) << api::dtype_name(dtype) << " element " << i;
    }
    // Judged as it is, every element is unwritten.
    const api::Fixture f = api::make_fixture(bf16_case());
    if (dtype == api::DType::bf16) {
      const api::CaseRecord r = api::judge(bf16_case(), f, api::compute_references(bf16_case(), f), out);
      EXPECT_EQ(r.failed_check, api::Check::unwritten);
    }
  }
}

TEST(Api, RunCaseRunsThePipelineWithItsProbes) {
  const api::CaseSpec& c = bf16_case();
  const auto host = api::make_kernel("host");
  const api::CaseRecord rec = api::run_case(c, *host, api::DeviceDetection{});
  EXPECT_EQ(rec.status, api::Status::pass) << rec.reason;
  EXPECT_EQ(rec.kernel, "host-contract");
  EXPECT_EQ(rec.fixture_fingerprint, moe::generate_checkpoint(c.problem).fingerprint());
  std::vector<std::string> probes;
  for (const auto& [name, st] : rec.probes) probes.push_back(name + " " + st);
  // smoke's first bf16 case has one token: nothing to rotate.
  const std::vector<std::string> want = {"rerun ran", "rerun_identical ran", "linearity_all_weights ran",
                                         "linearity_one_expert ran", "token_isolation ran", "red_zones ran",
                                         "token_permutation not run: one token: nothing to permute",
                                         "expert_relabeling ran",
                                         "stream_order not run: a host kernel: no device work to drive",
                                         "graph_replay not run: a host kernel: no device work to drive"};
  EXPECT_EQ(probes, want);
  // A kernel that swaps the gate and up halves is caught by the verdict.
  const auto bad = api::make_kernel("host-contract~gate_up_swapped");
  const api::CaseRecord b = api::run_case(c, *bad, api::DeviceDetection{});
  EXPECT_EQ(b.status, api::Status::fail);
  EXPECT_NE(b.failed_check, api::Check::none);
}
