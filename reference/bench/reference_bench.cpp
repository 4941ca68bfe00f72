// Reference engine speed, every figure from one process on the same OpenMP threads:
//   prefill  DeepSeek-V3 local shape (T=4096, H=7168, local I=256, E=256, k=8, fp8 128x128 blocks, 1x128 groups):
//            routed GFLOP/s (2*T*k*3*H*I) vs Eigen's dense sgemm of the same FLOPs (T x H times H x k*3*I),
//            and vs the naive fp64 implementation on one thread (a 4-token slice of the same layer: same per-FLOP
//            work, the rate is what is compared).
//   decode   Qwen3-30B-A3B (T=16, H=2048, I=768, E=128, k=8), bf16 and fp8 per-channel weights: stored weight bytes
//            of the experts hit, per second, vs a plain parallel memcpy measured in the same run.
// bench/summarize.py turns the JSON output into the ratios recorded in RESULTS.md:
//   build/cpu/reference/reference_bench --benchmark_out=bench.json --benchmark_out_format=json
//   python3 reference/bench/summarize.py bench.json
#include <benchmark/benchmark.h>
#include <omp.h>

#include <Eigen/Core>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "reference/moe/reference_moe.hpp"
#include "reference/naive/naive_moe.hpp"

namespace moe {
namespace {

ProblemSpec deepseek_prefill() {
  ProblemSpec s;
  s.hidden = 7168; s.inter = 2048; s.tp = 8; s.experts = 256; s.topk = 8; s.tokens = 4096; s.seed = 1;
  s.routing = {RoutingKind::grouped_sigmoid, true, 8, 4, 2.5f};
  s.quant.weight = WeightFormat::fp8_block; s.quant.act = ActFormat::fp8_group128;
  return s;
}

ProblemSpec qwen3_decode(WeightFormat w) {
  ProblemSpec s;
  s.hidden = 2048; s.inter = 768; s.experts = 128; s.topk = 8; s.tokens = 16; s.seed = 2;
  s.quant.weight = w;
  if (w != WeightFormat::bf16) s.quant.act = ActFormat::fp8_token;
  return s;
}

struct Prepared {
  ProblemSpec spec;
  Checkpoint ckpt;
  RoutingResult routing;
};

Prepared& prepared(const ProblemSpec& s, int key) {
  static std::unique_ptr<Prepared> cache[4];
  if (!cache[key]) {
    auto p = std::make_unique<Prepared>();
    p->spec = s;
    p->ckpt = generate_checkpoint(s);
    p->routing = route(s, p->ckpt);
    cache[key] = std::move(p);
  }
  return *cache[key];
}

double routed_flops(const ProblemSpec& s) {
  return 2.0 * double(s.tokens) * s.topk * 3.0 * double(s.hidden) * double(s.local_inter());
}

// Cold: the first call in the process pays for growing the engine's workspace (page faults on ~1 GiB of slots).
// Warm: later calls, as in a harness run over many cases, reuse it. Both are recorded; the target is judged warm.
void BM_Prefill_Reference_Cold(benchmark::State& st) {
  Prepared& p = prepared(deepseek_prefill(), 0);
  for (auto _ : st) benchmark::DoNotOptimize(reference_moe(p.spec, p.ckpt, p.routing, ReferenceKind::contract));
  st.counters["GFLOPs"] = benchmark::Counter(routed_flops(p.spec) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["threads"] = omp_get_max_threads();
}

void BM_Prefill_Reference(benchmark::State& st) {
  Prepared& p = prepared(deepseek_prefill(), 0);
  for (auto _ : st) benchmark::DoNotOptimize(reference_moe(p.spec, p.ckpt, p.routing, ReferenceKind::contract));
  st.counters["GFLOPs"] = benchmark::Counter(routed_flops(p.spec) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["threads"] = omp_get_max_threads();
}

void BM_Prefill_DenseSgemm(benchmark::State& st) {
  // Same FLOPs as the routed layer: [T, H] x [H, k*3*I].
  const ProblemSpec s = deepseek_prefill();
  const Eigen::Index m = s.tokens, k = s.hidden, n = s.topk * 3 * s.local_inter();
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(m, k), b = Eigen::MatrixXf::Random(k, n), c(m, n);
  for (auto _ : st) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  st.counters["GFLOPs"] = benchmark::Counter(2.0 * double(m) * double(k) * double(n) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["threads"] = Eigen::nbThreads();
}

void BM_Prefill_NaiveOneThread(benchmark::State& st) {
  ProblemSpec s = deepseek_prefill();
  Prepared& p = prepared(s, 0);
  ProblemSpec slice = s;
  slice.tokens = 4;  // the naive code is per token: its rate does not depend on T
  Checkpoint view;   // the first 4 tokens of the same layer
  view.x = Tensor("x", DType::bf16, {4, s.hidden});
  std::memcpy(view.x.bytes(), p.ckpt.x.bytes(), view.x.nbytes());
  view.router_logits = Tensor("router_logits", DType::f32, {4, s.experts});
  std::memcpy(view.router_logits.bytes(), p.ckpt.router_logits.bytes(), view.router_logits.nbytes());
  view.score_bias = p.ckpt.score_bias.clone();
  view.routed.w13 = p.ckpt.routed.w13.clone(); view.routed.w13_scale = p.ckpt.routed.w13_scale.clone();
  view.routed.w2 = p.ckpt.routed.w2.clone(); view.routed.w2_scale = p.ckpt.routed.w2_scale.clone();
  const auto r = naive::route(slice, view);
  for (auto _ : st) benchmark::DoNotOptimize(naive::moe(slice, view, r, true));
  st.counters["GFLOPs"] = benchmark::Counter(routed_flops(slice) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["threads"] = 1;
}

double hit_weight_bytes(const Prepared& p) {
  std::set<int> hit(p.routing.ids.begin(), p.routing.ids.end());
  const auto& w = p.ckpt.routed;
  const double per_expert = double(w.w13.nbytes() + w.w2.nbytes()) / double(w.count());
  return per_expert * double(hit.size());
}

void decode_bench(benchmark::State& st, WeightFormat f, int key) {
  Prepared& p = prepared(qwen3_decode(f), key);
  for (auto _ : st) benchmark::DoNotOptimize(reference_moe(p.spec, p.ckpt, p.routing, ReferenceKind::contract));
  st.counters["weight_bytes_per_s"] = benchmark::Counter(hit_weight_bytes(p), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["threads"] = omp_get_max_threads();
}
void BM_Decode_Reference_Bf16(benchmark::State& st) { decode_bench(st, WeightFormat::bf16, 1); }
void BM_Decode_Reference_Fp8Channel(benchmark::State& st) { decode_bench(st, WeightFormat::fp8_channel, 2); }

void BM_MemcpyBandwidth(benchmark::State& st) {
  // A plain parallel copy of 1 GiB, one contiguous half per thread: the machine's copy ceiling on these threads.
  const std::size_t n = std::size_t(1) << 30;
  std::vector<char> src(n, 1), dst(n, 0);
  for (auto _ : st) {
#pragma omp parallel
    {
      const std::size_t nt = std::size_t(omp_get_num_threads()), id = std::size_t(omp_get_thread_num());
      const std::size_t b = n / nt * id, e = id + 1 == nt ? n : n / nt * (id + 1);
      std::memcpy(dst.data() + b, src.data() + b, e - b);
    }
    benchmark::DoNotOptimize(dst.data());
  }
  st.counters["bytes_per_s"] = benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["threads"] = omp_get_max_threads();
}

}  // namespace
}  // namespace moe

BENCHMARK(moe::BM_MemcpyBandwidth)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
BENCHMARK(moe::BM_Decode_Reference_Bf16)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
BENCHMARK(moe::BM_Decode_Reference_Fp8Channel)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
BENCHMARK(moe::BM_Prefill_DenseSgemm)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(moe::BM_Prefill_Reference_Cold)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(moe::BM_Prefill_Reference)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(moe::BM_Prefill_NaiveOneThread)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK_MAIN();
