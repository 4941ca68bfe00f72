// The simulated envelope's cost against the references it sits beside, on the nightly's shapes, in one process on
// the same OpenMP threads: per shape, `References` (contract + ideal, what every judged case computes),
// `Envelope` (the accumulation and rounding ensembles harness/pipeline/envelope_sim.cpp computes, in one
// reference_ensembles pass) and `EnvelopeSeparate` (the same two ensembles as two reference_ensemble calls, each
// decoding the weights); the envelope's cost is Envelope / References. With accum=mma14 declared: `Sparse` (the
// sparse members, 8 on every token up to 128) and `ExplainSteps` (the requantization steps a verdict explains its
// maxima by at most: kMaxExplained = 16 token-slots for expert_partial, the first 16 here, and 16 tokens' every slot
// for token_gain, at most T; reference/moe/band_explain.hpp slot_scale_steps, no memo), each against References.
//   build/cpu/reference/envelope_bench --benchmark_out=env.json --benchmark_out_format=json
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <memory>

#include "fixtures/checkpoint.hpp"
#include "reference/moe/band_explain.hpp"
#include "reference/moe/ensemble.hpp"
#include "reference/moe/reference_moe.hpp"

namespace moe {
namespace {

// Qwen3.5-35B-A3B at TP4 (local I 128, shared 512 / 4), fp8 per-channel weights and per-token activations for
// both expert kinds; DeepSeek-V3 at TP8 EP8 (local I 256, 32 local experts), fp8 128 x 128 blocks and 1 x 128 groups.
ProblemSpec qwen35(std::int64_t tokens) {
  ProblemSpec s;
  s.hidden = 2048; s.inter = 512; s.tp = 4; s.experts = 256; s.topk = 8; s.tokens = tokens; s.seed = 3;
  s.n_shared = 1; s.shared_inter = 512;
  s.quant.weight = s.shared_quant.weight = WeightFormat::fp8_channel;
  s.quant.act = s.shared_quant.act = ActFormat::fp8_token;
  return s;
}
ProblemSpec deepseek(std::int64_t tokens) {
  ProblemSpec s;
  s.hidden = 7168; s.inter = 2048; s.tp = 8; s.ep = 8; s.experts = 256; s.topk = 8; s.tokens = tokens; s.seed = 4;
  s.n_shared = 1; s.shared_inter = 2048;
  s.routing = {RoutingKind::grouped_sigmoid, true, 8, 4, 2.5f};
  s.quant.weight = s.shared_quant.weight = WeightFormat::fp8_block;
  s.quant.act = s.shared_quant.act = ActFormat::fp8_group128;
  return s;
}

struct Prepared {
  ProblemSpec spec;
  Checkpoint ckpt;
  RoutingResult routing;
};
Prepared& prepared(int key) {
  static std::unique_ptr<Prepared> cache[5];
  if (!cache[key]) {
    auto p = std::make_unique<Prepared>();
    p->spec = key == 0 ? qwen35(1) : key == 1 ? qwen35(16) : key == 2 ? qwen35(128) : key == 3 ? deepseek(1) : deepseek(16);
    p->ckpt = generate_checkpoint(p->spec);
    p->routing = route(p->spec, p->ckpt);
    cache[key] = std::move(p);
  }
  return *cache[key];
}

void references(benchmark::State& st) {
  Prepared& p = prepared(int(st.range(0)));
  for (auto _ : st) {
    benchmark::DoNotOptimize(reference_moe(p.spec, p.ckpt, p.routing, ReferenceKind::contract));
    benchmark::DoNotOptimize(reference_moe(p.spec, p.ckpt, p.routing, ReferenceKind::ideal));
  }
  st.counters["threads"] = omp_get_max_threads();
}
// The two groups envelope_sim.cpp draws: accumulation members and rounding members (no GEMM noise).
std::vector<EnsembleSpec> envelope_groups(const ProblemSpec& s) {
  EnsembleSpec e;
  e.tokens = ensemble_tokens(s.tokens);
  EnsembleSpec r = e;
  r.seed = e.seed + 1;
  r.act_noise = half_ulp_noise(s.intermediate);
  r.gemm_noise = false;
  return {e, r};
}
void envelope(benchmark::State& st) {
  Prepared& p = prepared(int(st.range(0)));
  const std::vector<EnsembleSpec> g = envelope_groups(p.spec);
  for (auto _ : st) benchmark::DoNotOptimize(reference_ensembles(p.spec, p.ckpt, p.routing, g));
  st.counters["threads"] = omp_get_max_threads();
  st.counters["members"] = g[0].members + g[1].members;
}
void envelope_separate(benchmark::State& st) {
  Prepared& p = prepared(int(st.range(0)));
  const std::vector<EnsembleSpec> g = envelope_groups(p.spec);
  for (auto _ : st)
    for (const EnsembleSpec& e : g) benchmark::DoNotOptimize(reference_ensemble(p.spec, p.ckpt, p.routing, e));
  st.counters["threads"] = omp_get_max_threads();
  st.counters["members"] = g[0].members + g[1].members;
}

// The case as a kernel declaring accum=mma14 judges it (the same weights).
ProblemSpec narrow(const ProblemSpec& s) {
  ProblemSpec n = s;
  n.accum_bits = 14;
  return n;
}
void sparse(benchmark::State& st) {
  Prepared& p = prepared(int(st.range(0)));
  EnsembleSpec e;
  e.members = kSparseMembers;
  e.gemm_scale = kSparseGemmScale;
  e.truncation = false;
  e.tokens = ensemble_tokens(p.spec.tokens, kSparseMaxTokens);
  const ProblemSpec n = narrow(p.spec);
  for (auto _ : st) benchmark::DoNotOptimize(reference_ensembles(n, p.ckpt, p.routing, {e}));
  st.counters["threads"] = omp_get_max_threads();
  st.counters["members"] = e.members;
}
void explain_steps(benchmark::State& st) {
  Prepared& p = prepared(int(st.range(0)));
  const ProblemSpec n = narrow(p.spec);
  std::int64_t vectors = 0;
  const std::int64_t k = p.routing.k;
  for (auto _ : st) {
    for (std::int64_t i = 0; i < std::min<std::int64_t>(16, n.tokens * k); ++i) {  // expert_partial's token-slots
      const auto a = slot_scale_steps(n, p.ckpt, p.routing, i / k, i % k);
      vectors += std::int64_t(a.size());
      benchmark::DoNotOptimize(a.data());
    }
    for (std::int64_t t = 0; t < std::min<std::int64_t>(16, n.tokens); ++t) {  // token_gain's tokens
      const auto b = slot_scale_steps(n, p.ckpt, p.routing, t, -1);
      vectors += std::int64_t(b.size());
      benchmark::DoNotOptimize(b.data());
    }
  }
  st.counters["threads"] = omp_get_max_threads();
  st.counters["steps"] = benchmark::Counter(double(vectors), benchmark::Counter::kAvgIterations);
}

}  // namespace
}  // namespace moe

// Arguments: 0 qwen3.5 T1, 1 qwen3.5 T16, 2 qwen3.5 T128, 3 deepseek T1, 4 deepseek T16.
BENCHMARK(moe::references)->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
BENCHMARK(moe::envelope)->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
BENCHMARK(moe::envelope_separate)->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
BENCHMARK(moe::sparse)->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
BENCHMARK(moe::explain_steps)->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
BENCHMARK_MAIN();
