// The envelope simulated only where a verdict needs it (harness/pipeline/case_pipeline.hpp needs_envelope): an
// output that passes at the case's own thresholds is judged without one and says so; one that fails gets it; and
// every verdict is the one the references with their envelope computed up front give (the definition).
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>
#include <fmt/format.h>

#include "fixtures/content_seal.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/pipeline/reference_cache.hpp"
#include "harness/pipeline/rounding_resolution.hpp"
#include "kernels/host/host_contract_kernel.hpp"
#include "kernels/mutants/host_mutant_hooks.hpp"
#include "kernels/mutants/mutation.hpp"
#include "reference/moe/ensemble.hpp"

namespace moe {
namespace {

const char* kSuite = R"(suite: t
defaults: {hidden: 256, inter: 256, experts: 16, topk: 4, tokens: 12}
cases:
  - {quant: {weight: fp8_channel, act: fp8_token}}
  - {quant: {weight: fp8_block, act: fp8_group128}, n_shared: 1, shared_inter: 128, tokens: 5}
)";

std::filesystem::path temp_dir(const char* name) {
  const auto d = std::filesystem::temp_directory_path() / fmt::format("moe-{}-{}", name, ::getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

HostContractKernel host(std::optional<Mutation> m) {
  return HostContractKernel(HostContractKernel::kDefaultFlopBudget, m ? host_mutant_hooks(*m) : nullptr);
}

TEST(LazyEnvelope, SimulatedOnlyWhereTheVerdictNeedsItAndTheVerdictIsTheSame) {
  const std::filesystem::path dir = temp_dir("lazy-envelope");
  int passed = 0, failed = 0;
  for (const CaseSpec& c : load_suite_text(kSuite, "t.yaml").cases)
    for (std::optional<Mutation> m : {std::optional<Mutation>{}, std::optional{Mutation::intermediate_toward_zero},
                                      std::optional{Mutation::gate_up_swapped_one_expert}}) {
      HostContractKernel lazy_kernel = host(m), eager_kernel = host(m);
      const CaseRecord lazy = execute_case(c, lazy_kernel, DeviceDetection{}, {});
      // The definition: references whose envelope was simulated before the kernel ran, served by a cache.
      ReferenceCache cache(dir / (m ? std::string(mutation_name(*m)) : std::string("clean")));
      const ProblemSpec p = case_problem(c, std::nullopt);
      const Checkpoint pristine = pristine_checkpoint(c, p, nullptr);
      const ResolvedContract rc = resolve_contract(c, p, eager_kernel.rounding_contract(p));
      ASSERT_FALSE(cache.get(c, rc, pristine, seal_checkpoint(pristine).fingerprint, true).envelope.empty());
      PipelineOptions opt;
      opt.references = &cache;
      const CaseRecord eager = execute_case(c, eager_kernel, DeviceDetection{}, opt);
      ASSERT_EQ(cache.hits(), 1u) << c.id << ": the eager run did not use the prepared references";
      const std::string what = c.id + (m ? " " + std::string(mutation_name(*m)) : " clean");
      EXPECT_EQ(lazy.status, eager.status) << what << ": " << lazy.reason << " | " << eager.reason;
      EXPECT_EQ(lazy.failed_check, eager.failed_check) << what;
      EXPECT_EQ(eager.metrics.at("envelope_members"), double(kEnsembleMembers)) << what;
      if (lazy.status == Status::pass) {
        ++passed;
        EXPECT_EQ(lazy.metrics.at("envelope_members"), 0.0) << what;
        EXPECT_NE(lazy.details.find("envelope: not simulated: the output passes"), std::string::npos) << lazy.details;
      } else {
        ++failed;
        EXPECT_EQ(lazy.metrics.at("envelope_members"), double(kEnsembleMembers)) << what;
        EXPECT_EQ(lazy.reason, eager.reason) << what;
      }
    }
  EXPECT_GE(passed, 2);  // the clean kernel on both cases
  EXPECT_GE(failed, 2);  // gate and up swapped on one expert, on both
  std::filesystem::remove_all(dir);
}

TEST(LazyEnvelope, AnEnvelopeSimulatedForAFailingOutputIsStoredWithTheReferences) {
  const std::filesystem::path dir = temp_dir("lazy-envelope-store");
  const CaseSpec c = load_suite_text(kSuite, "t.yaml").cases[0];
  ReferenceCache cache(dir);
  PipelineOptions opt;
  opt.references = &cache;
  HostContractKernel clean = host(std::nullopt), bad = host(Mutation::gate_up_swapped_one_expert);
  ASSERT_EQ(execute_case(c, clean, DeviceDetection{}, opt).status, Status::pass);
  const ProblemSpec p = case_problem(c, std::nullopt);
  const Checkpoint pristine = pristine_checkpoint(c, p, nullptr);
  const ResolvedContract rc = resolve_contract(c, p, clean.rounding_contract(p));
  const std::uint64_t fp = seal_checkpoint(pristine).fingerprint;
  EXPECT_TRUE(cache.get(c, rc, pristine, fp, false).envelope.empty());  // a passing output stored none
  ASSERT_EQ(execute_case(c, bad, DeviceDetection{}, opt).status, Status::fail);
  EXPECT_FALSE(cache.get(c, rc, pristine, fp, false).envelope.empty());  // the failing one's is kept
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace moe
