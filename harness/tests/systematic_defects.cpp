// systematic_defects: how many outputs with a known defect today's per-token checks pass, and how many of those the
// systematic statistics (verdict/systematic.hpp) catch. For every statistical case of a suite the host contract
// kernel declares it can run, the correct output is transformed into:
//   dead_channel     channel H/2 zeroed for every token;
//   gain_1.03        every element times 1.03, rounded to the output dtype (nearest even);
//   gain_1.003       the same with 1.003;
//   truncation       the kernel's fp32 sum (the host kernel run with an f32 output) truncated toward zero to the
//                    output dtype instead of rounded to nearest even (cases with a fused shared path: a separate
//                    one rounds twice inside the kernel);
//   skipped_requant  the intermediate not fake-quantized before stage 2 (cases with quantized activations),
//                    computed by a small contract emulator below, which with the quantization in place must agree
//                    with the contract reference (its max rel is printed as a check of the emulator).
// Each is judged by today's per-token checks (judge()) and by the systematic statistics, independently.
//
// Usage: systematic_defects [--suite S] [--filter GLOB]... [--seed N]   (markdown on stdout, progress on stderr)
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <string>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "harness/case/case_loader.hpp"
#include "verdict/judge.hpp"
#include "harness/pipeline/reference_cache.hpp"
#include "harness/run/runner.hpp"
#include "verdict/systematic.hpp"
#include "harness/case/case_thresholds.hpp"
#include "kernels/host/host_contract_kernel.hpp"
#include "formats/bf16.hpp"
#include "formats/fp16.hpp"
#include "fixtures/tensor_element.hpp"
#include "reference/moe/act_quant.hpp"
#include "reference/moe/activation.hpp"
#include "reference/moe/expert_dequant.hpp"

namespace moe {
namespace {

// One expert applied to the rows of its assignments: y = W2 q(round(act(W13 a + b13))) + b2, the contract's stage
// order, with the intermediate's quantization q skipped when asked.
void expert_rows(const ProblemSpec& p, const ExpertWeights& w, const QuantScheme& q, std::int64_t e, std::int64_t inter,
                 bool shared, bool skip_requant, std::vector<std::vector<float>>& rows) {
  const std::int64_t h = p.hidden;
  std::vector<float> w13(std::size_t(2 * inter * h)), w2(std::size_t(h * inter));
  dequantize_rows<float>(w, q, WeightMatrix::w13, e, h, inter, 0, 2 * inter, w13.data());
  dequantize_rows<float>(w, q, WeightMatrix::w2, e, h, inter, 0, h, w2.data());
  const float* b13 = w.w13_bias.empty() ? nullptr : w.w13_bias.span<float>().data() + e * 2 * inter;
  const float* b2 = w.w2_bias.empty() ? nullptr : w.w2_bias.span<float>().data() + e * h;
  const ActivationParams ap{p.activation, p.layout, p.swiglu_alpha, p.swiglu_limit, !shared || p.clamp_shared};
  std::vector<float> hv(std::size_t(2 * inter)), z(static_cast<std::size_t>(inter));
  for (auto& a : rows) {  // in: the quantized stage-1 input; out: the expert's output
    for (std::int64_t r = 0; r < 2 * inter; ++r) {
      float acc = 0;
      for (std::int64_t c = 0; c < h; ++c) acc += w13[r * h + c] * a[c];
      hv[r] = acc + (b13 ? b13[r] : 0.0f);
    }
    apply_activation(hv.data(), z.data(), inter, ap);
    round_to_dtype(z.data(), inter, p.intermediate);
    if (!skip_requant) fake_quantize_activation_rows(z.data(), 1, inter, q);
    for (std::int64_t r = 0; r < h; ++r) {
      float acc = 0;
      for (std::int64_t i = 0; i < inter; ++i) acc += w2[r * inter + i] * z[i];
      a[r] = acc + (b2 ? b2[r] : 0.0f);
    }
  }
}

// The contract output (rounded to the output dtype), optionally without the intermediate's quantization.
std::vector<float> emulate(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& rt, bool skip_requant) {
  const std::int64_t t = p.tokens, h = p.hidden, k = rt.k, first = p.first_local_expert(), local = p.local_experts();
  std::vector<float> x(std::size_t(t * h));
  for (std::int64_t i = 0; i < t * h; ++i) {
    const std::uint16_t b = c.x.span<std::uint16_t>()[i];
    x[i] = p.input_dtype == DType::bf16 ? bf16_to_f32(b) : fp16_to_f32(b);
  }
  const bool on_input = p.router_weight_on == RouterWeightOn::input;
  std::vector<std::vector<float>> slot(std::size_t(t * k)), shared(std::size_t(t * p.n_shared));
  std::vector<char> hit(std::size_t(t * k), 0);
  for (std::int64_t e = 0; e < local; ++e) {
    std::vector<std::int64_t> who;
    std::vector<std::vector<float>> rows;
    for (std::int64_t i = 0; i < t * k; ++i) {
      if (rt.ids[i] - first != e) continue;
      std::vector<float> a(x.begin() + (i / k) * h, x.begin() + (i / k + 1) * h);
      if (on_input) {
        for (auto& v : a) v *= rt.weights[i];
        round_to_dtype(a.data(), h, p.input_dtype);
      }
      fake_quantize_activation_rows(a.data(), 1, h, p.quant);
      who.push_back(i);
      rows.push_back(std::move(a));
    }
    if (who.empty()) continue;
    expert_rows(p, c.routed, p.quant, e, p.local_inter(), false, skip_requant, rows);
    for (std::size_t j = 0; j < who.size(); ++j) {
      if (!on_input) for (auto& v : rows[j]) v *= rt.weights[who[j]];
      slot[who[j]] = std::move(rows[j]);
      hit[who[j]] = 1;
    }
  }
  if (p.ep_rank == 0)
    for (int s = 0; s < p.n_shared; ++s) {
      std::vector<std::vector<float>> rows;
      for (std::int64_t i = 0; i < t; ++i) {
        std::vector<float> a(x.begin() + i * h, x.begin() + (i + 1) * h);
        fake_quantize_activation_rows(a.data(), 1, h, p.shared_quant);
        rows.push_back(std::move(a));
      }
      expert_rows(p, c.shared, p.shared_quant, s, p.local_shared_inter(), true, skip_requant, rows);
      for (std::int64_t i = 0; i < t; ++i) shared[i * p.n_shared + s] = std::move(rows[i]);
    }
  const bool separate = p.shared_path == SharedPath::separate && p.n_shared > 0;
  std::vector<float> out(std::size_t(t * h));
  for (std::int64_t i = 0; i < t; ++i) {
    std::vector<float> acc(std::size_t(h), 0.0f), sh(std::size_t(h), 0.0f);
    for (std::int64_t j = 0; j < k; ++j)
      if (hit[i * k + j]) for (std::int64_t col = 0; col < h; ++col) acc[col] += slot[i * k + j][col];
    if (p.ep_rank == 0)
      for (int s = 0; s < p.n_shared; ++s)
        for (std::int64_t col = 0; col < h; ++col) (separate ? sh : acc)[col] += shared[i * p.n_shared + s][col];
    round_to_dtype(acc.data(), h, p.output_dtype);
    if (separate) {
      round_to_dtype(sh.data(), h, p.output_dtype);
      for (std::int64_t col = 0; col < h; ++col) acc[col] += sh[col];
      round_to_dtype(acc.data(), h, p.output_dtype);
    }
    std::copy(acc.begin(), acc.end(), out.begin() + i * h);
  }
  return out;
}

Tensor from_values(const std::vector<float>& v, const ProblemSpec& p) {
  Tensor o("out", p.output_dtype, {p.tokens, p.hidden});
  for (std::size_t i = 0; i < v.size(); ++i) store_element(o, std::int64_t(i), v[i]);  // nearest even
  return o;
}

// x truncated toward zero to dtype d: round to nearest even, then one step toward zero if that went away from it.
float truncate_to(float x, DType d) {
  if (d == DType::f32) return x;
  const bool bf = d == DType::bf16;
  std::uint16_t code = bf ? bf16_from_f32(x) : fp16_from_f32(x);
  const float r = bf ? bf16_to_f32(code) : fp16_to_f32(code);
  if (std::fabs(r) > std::fabs(x) && (code & 0x7FFF) != 0) --code;  // sign-magnitude: one code toward zero
  return bf ? bf16_to_f32(code) : fp16_to_f32(code);
}

struct Tally {
  int cases = 0, per_token_failed = 0, per_token_passed = 0, caught = 0;
  std::map<std::string, int> by;  // the first systematic statistic that failed, on the per-token passes
  std::map<std::string, int> any;  // every systematic statistic that failed, on all cases
};

}  // namespace
}  // namespace moe

int main(int argc, char** argv) {
  using namespace moe;
  std::string suite_name = "nightly";
  std::vector<std::string> filters;
  std::optional<std::uint64_t> seed;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--suite")) suite_name = argv[i + 1];
    else if (!std::strcmp(argv[i], "--filter")) filters.push_back(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seed")) seed = std::stoull(argv[i + 1]);
    else { std::fprintf(stderr, "usage: systematic_defects [--suite S] [--filter GLOB]... [--seed N]\n"); return 2; }
  }
  try {
    const Suite suite = load_suite_file(resolve_suite(suite_name));
    HostContractKernel host;
    host.set_timing(false);
    const std::vector<std::string> defects = {"clean", "dead_channel", "gain_1.03", "gain_1.003", "truncation", "skipped_requant"};
    std::map<std::string, Tally> tally;
    std::printf("| case | defect | per-token verdict | systematic failures |\n|---|---|---|---|\n");
    int declined = 0;
    for (const CaseSpec& c : suite.cases) {
      if (c.tier != Tier::statistical || !case_selected(filters, c.id)) continue;
      ProblemSpec p = c.problem;
      if (seed) p.seed = *seed;
      if (!host.supports(p, nullptr).supported) { ++declined; continue; }
      std::fprintf(stderr, "systematic_defects: %s\n", c.id.c_str());
      const Checkpoint pristine = generate_checkpoint(p);
      const ReferenceSet refs = compute_references(p, pristine);
      const std::vector<float> ref(refs.contract.begin(), refs.contract.end());
      const Thresholds th = case_thresholds(c);
      auto run_host = [&](const ProblemSpec& q) {
        Checkpoint w = pristine.clone();
        host.prepare(q, w);
        Tensor o("out", q.output_dtype, {q.tokens, q.hidden});
        fill_sentinel(o, 0);
        host.run(q, w, refs.routing, o);
        std::vector<float> v(std::size_t(o.numel()));
        for (std::int64_t i = 0; i < o.numel(); ++i) v[i] = element_as_f32(o, i);
        return v;
      };
      const std::vector<float> clean = run_host(p);
      const std::int64_t h = p.hidden;
      const bool quant_act = p.quant.act != ActFormat::none || (p.n_shared > 0 && p.shared_quant.act != ActFormat::none);
      double emulator_rel = NAN;
      for (const std::string& d : defects) {
        std::vector<float> v = clean;
        if (d == "dead_channel") {
          for (std::int64_t t = 0; t < p.tokens; ++t) v[t * h + h / 2] = 0.0f;
        } else if (d == "gain_1.03" || d == "gain_1.003") {
          const double g = d == "gain_1.03" ? 1.03 : 1.003;
          for (auto& x : v) x = float(x * g);  // rounded to the output dtype by from_values
        } else if (d == "truncation") {
          if (p.n_shared > 0 && p.shared_path == SharedPath::separate) continue;
          ProblemSpec q = p;
          q.output_dtype = DType::f32;
          v = run_host(q);
          for (auto& x : v) x = truncate_to(x, p.output_dtype);
        } else if (d == "skipped_requant") {
          if (!quant_act) continue;
          const Tensor check = from_values(emulate(p, pristine, refs.routing, false), p);
          emulator_rel = judge(ref, {}, check, p.tokens, h, th, refs.routing).max_rel;
          v = emulate(p, pristine, refs.routing, true);
        }
        const Tensor o = from_values(v, p);
        const Judgement j = judge(ref, {}, o, p.tokens, h, th, refs.routing);
        const auto stats = systematic_checks({ref, o, p.tokens, h, refs.routing, p.first_local_expert(), p.local_experts()},
                                             th.systematic);
        Tally& tl = tally[d];
        ++tl.cases;
        std::string failed;
        for (const auto& s : stats)
          if (s.failed) { failed += (failed.empty() ? "" : ", ") + s.name; ++tl.any[s.name]; }
        if (j.pass) {
          ++tl.per_token_passed;
          if (const StatisticRecord* f = first_failure(stats)) { ++tl.caught; ++tl.by[f->name]; }
        } else {
          ++tl.per_token_failed;
        }
        std::printf("| `%s` | %s | %s | %s |\n", c.id.c_str(), d.c_str(),
                    j.pass ? fmt::format("pass (min cos {:.6f}, max rel {:.2e})", j.min_cos, j.max_rel).c_str()
                           : ("FAIL " + to_string(j.failed_check)).c_str(),
                    failed.empty() ? "none" : failed.c_str());
        if (d == "skipped_requant")
          std::printf("| `%s` | (emulator with the requantization: max rel %.2e against the contract) | | |\n",
                      c.id.c_str(), emulator_rel);
      }
    }
    std::printf("\n%d case(s) declined by the host kernel's budget.\n\n", declined);
    std::printf("| defect | cases | failed per-token checks | passed per-token checks | of those, caught by the systematic "
                "statistics (first failing) | still passing | systematic failures on all cases |\n|---|---|---|---|---|---|---|\n");
    for (const std::string& d : defects) {
      const Tally& t = tally[d];
      std::string by, any;
      for (const auto& [k, n] : t.by) by += fmt::format("{}{} {}", by.empty() ? "" : ", ", k, n);
      for (const auto& [k, n] : t.any) any += fmt::format("{}{} {}", any.empty() ? "" : ", ", k, n);
      std::printf("| %s | %d | %d | %d | %d%s | %d | %s |\n", d.c_str(), t.cases, t.per_token_failed, t.per_token_passed,
                  t.caught, by.empty() ? "" : (" (" + by + ")").c_str(), t.per_token_passed - t.caught,
                  any.empty() ? "none" : any.c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "systematic_defects: %s\n", e.what());
    return 3;
  }
}
