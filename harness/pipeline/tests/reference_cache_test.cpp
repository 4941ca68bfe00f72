// The on-disk caches a bisect relies on: a hit returns exactly what computing would, every part of the key
// matters, and a damaged entry is recomputed, never used.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "fixtures/checkpoint.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/pipeline/reference_cache.hpp"
#include "harness/pipeline/weight_cache.hpp"

namespace moe {
namespace {
namespace fs = std::filesystem;

Suite suite(const std::string& first_case_extra = "") {
  return load_suite_text(R"(suite: t
defaults: {hidden: 128, inter: 64, experts: 8, topk: 2}
cases:
  - {tokens: 5, quant: {weight: mxfp4, act: none}, activation: swiglu_oai, biases: true)" + first_case_extra + R"(}
  - {tokens: 3, quant: {weight: fp8_block, act: fp8_group128}, n_shared: 1, shared_inter: 64}
  - {tokens: 4, activation: gelu_tanh, layout: up_gate}
)", "t.yaml");
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(testing::TempDir()) / ("moe-refcache-" + name);
  fs::remove_all(d);
  return d;
}

bool same_bits(const Values& a, const Values& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(ReferenceCache, AHitIsBitIdenticalToComputingAndCountsAsOne) {
  const Suite s = suite();
  ReferenceCache cache(fresh_dir("hit"));
  for (const CaseSpec& c : s.cases) {
    const Checkpoint ck = generate_checkpoint(c.problem);
    const ReferenceSet direct = compute_references(c.problem, ck);
    const ReferenceSet first = cache.get(c, case_contract(c.problem), ck, ck.fingerprint());
    const ReferenceSet second = cache.get(c, case_contract(c.problem), ck, ck.fingerprint());
    for (const ReferenceSet* r : {&first, &second}) {
      EXPECT_TRUE(same_bits(r->contract, direct.contract)) << c.id;
      EXPECT_TRUE(same_bits(r->ideal, direct.ideal)) << c.id;
      EXPECT_EQ(r->routing.ids, direct.routing.ids);
      EXPECT_EQ(r->routing.weights, direct.routing.weights);
      EXPECT_EQ(r->routing.k, direct.routing.k);
    }
  }
  EXPECT_EQ(cache.misses(), 3u);
  EXPECT_EQ(cache.hits(), 3u);
}

TEST(ReferenceCache, EveryPartOfTheKeyMatters) {
  const Suite s = suite();
  const CaseSpec& a = s.cases[0];
  // The same id with another problem field (SwiGLU alpha shows in the id since the id spells every problem key; a
  // field added later might not): the key hashes the whole case, not the id.
  CaseSpec tightened = a;
  tightened.problem.swiglu_alpha = 1.5f;
  EXPECT_EQ(a.id, tightened.id);
  EXPECT_NE(ReferenceCache::key(a, "default", 1), ReferenceCache::key(tightened, "default", 1));
  EXPECT_NE(ReferenceCache::key(a, "default", 1), ReferenceCache::key(a, "default", 2));  // another fixture (e.g. --seed)
  const Suite s3 = suite(", tolerance: {min_cos: 0.9999}");  // judging only: the reference is the same
  EXPECT_EQ(ReferenceCache::key(a, "default", 1), ReferenceCache::key(s3.cases[0], "default", 1));
  EXPECT_NE(ReferenceCache::key(a, "default", 1).find(reference_version()), std::string::npos);
  EXPECT_EQ(reference_version().size(), 64u);  // a SHA-256 of the oracle's sources

  ReferenceCache cache(fresh_dir("key"));
  ProblemSpec other_seed = a.problem;
  other_seed.seed = 99;
  const Checkpoint ck0 = generate_checkpoint(a.problem), ck1 = generate_checkpoint(other_seed);
  ASSERT_NE(ck0.fingerprint(), ck1.fingerprint());
  cache.get(a, case_contract(a.problem), ck0, ck0.fingerprint());
  const ReferenceSet r1 = cache.get(a, case_contract(other_seed), ck1, ck1.fingerprint());
  EXPECT_EQ(cache.hits(), 0u);
  EXPECT_TRUE(same_bits(r1.contract, compute_references(other_seed, ck1).contract));
}

TEST(ReferenceCache, ADamagedEntryIsRecomputedNotUsed) {
  const Suite s = suite();
  const CaseSpec& c = s.cases[1];
  const fs::path dir = fresh_dir("damaged");
  const Checkpoint ck = generate_checkpoint(c.problem);
  const ReferenceSet direct = compute_references(c.problem, ck);
  { ReferenceCache cache(dir); cache.get(c, case_contract(c.problem), ck, ck.fingerprint()); }
  for (const auto& e : fs::directory_iterator(dir)) fs::resize_file(e.path(), fs::file_size(e.path()) / 2);  // truncated
  ReferenceCache cache(dir);
  const ReferenceSet r = cache.get(c, case_contract(c.problem), ck, ck.fingerprint());
  EXPECT_EQ(cache.hits(), 0u);
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_TRUE(same_bits(r.contract, direct.contract));
  ReferenceCache again(dir);  // and the rewritten entry is whole again
  again.get(c, case_contract(c.problem), ck, ck.fingerprint());
  EXPECT_EQ(again.hits(), 1u);
}

TEST(WeightCacheOnDisk, LoadedWeightsAreTheGeneratedBytesAndDamageRegenerates) {
  const Suite s = suite();
  const ProblemSpec& p = s.cases[1].problem;  // fp8 block weights + a shared expert
  const fs::path dir = fresh_dir("weights");
  const std::uint64_t want = generate_checkpoint(p).fingerprint();
  {
    WeightCache w(std::size_t(1) << 30, dir);
    EXPECT_EQ(w.checkpoint_for(p).fingerprint(), want);
    EXPECT_EQ(w.disk_hits(), 0u);
  }
  {
    WeightCache w(std::size_t(1) << 30, dir);  // a new run: from disk
    EXPECT_EQ(w.checkpoint_for(p).fingerprint(), want);
    EXPECT_EQ(w.disk_hits(), 1u);
  }
  // Flip one byte near the end of the file (inside a tensor): structurally valid, wrong bytes.
  for (const auto& e : fs::directory_iterator(dir)) {
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-3, std::ios::end);
    char b = 0;
    f.read(&b, 1);
    b = char(b ^ 0x40);
    f.seekp(-3, std::ios::end);
    f.write(&b, 1);
  }
  WeightCache w(std::size_t(1) << 30, dir);
  EXPECT_EQ(w.checkpoint_for(p).fingerprint(), want);
  EXPECT_EQ(w.disk_hits(), 0u);
}

}  // namespace
}  // namespace moe
