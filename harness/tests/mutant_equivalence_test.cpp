// TRANSIENT: every host mutant built the new way (MutantKernel around the clean host kernel for the input/output
// ones, the host kernel with a mutant's hooks for the in-kernel ones, through make_kernel_by_id) against the host
// kernel's old in-kernel branches (legacy_host_mutant_kernel.cpp), bit for bit, on every case of cases/selftest.yaml
// where the mutant applies, over seeds 1..5 (the selftest's cases and first seeds).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "harness/case_loader.hpp"
#include "harness/case_pipeline.hpp"
#include "harness/kernel_registry.hpp"
#include "kernels/host/host_contract_kernel.hpp"
#include "kernels/mutants/mutation.hpp"

namespace moe {
std::unique_ptr<KernelUnderTest> make_legacy_host_mutant(Mutation m);

namespace {

struct Captured {
  CaseRecord rec;
  std::vector<float> out;
};

Captured run(const CaseSpec& c, KernelUnderTest& k, std::uint64_t seed) {
  Captured r;
  PipelineOptions opt;
  opt.seed = seed;
  opt.capture = [&r](const std::vector<float>&, const std::vector<float>& o) { r.out = o; };
  DeviceDetection none;
  r.rec = execute_case(c, k, none, opt);
  return r;
}

TEST(MutantEquivalence, NewHostMutantsEqualTheOldInKernelOnesBitForBit) {
  const Suite suite = load_suite_file(resolve_suite("selftest"));
  HostContractKernel clean;
  int total_compared = 0, total_live = 0;
  for (Mutation m : all_mutations()) {
    if (gpu_only(m)) continue;
    auto now = make_kernel_by_id("host-contract~" + std::string(mutation_name(m)), 0);
    auto old = make_legacy_host_mutant(m);
    int compared = 0, live = 0, equal = 0;
    for (const CaseSpec& c : suite.cases) {
      if (!mutation_applies(m, c.problem)) continue;
      for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        const Captured a = run(c, *now, seed), b = run(c, *old, seed), g = run(c, clean, seed);
        ++compared;
        const bool same = a.out.size() == b.out.size() &&
                          std::memcmp(a.out.data(), b.out.data(), a.out.size() * sizeof(float)) == 0;
        equal += same;
        EXPECT_TRUE(same) << mutation_name(m) << " on " << c.id << " seed " << seed;
        EXPECT_EQ(a.rec.status, b.rec.status) << mutation_name(m) << " on " << c.id << " seed " << seed;
        EXPECT_EQ(a.rec.failed_check, b.rec.failed_check) << mutation_name(m) << " on " << c.id << " seed " << seed;
        live += !(g.out.size() == b.out.size() && std::memcmp(g.out.data(), b.out.data(), g.out.size() * sizeof(float)) == 0);
      }
    }
    std::printf("%-28s %-9s compared %3d, bit-equal %3d, live (differs from clean) %3d\n",
                std::string(mutation_name(m)).c_str(), mutant_level(m) == MutantLevel::io ? "io" : "in_kernel",
                compared, equal, live);
    total_compared += compared;
    total_live += live;
  }
  std::printf("total: %d (mutant, case, seed) runs compared, %d live\n", total_compared, total_live);
}

}  // namespace
}  // namespace moe
