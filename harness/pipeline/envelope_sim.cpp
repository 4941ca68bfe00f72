#include "harness/pipeline/envelope_sim.hpp"

#include <fmt/format.h>

#include "fixtures/tensor_element.hpp"
#include "reference/moe/ensemble.hpp"
#include "verdict/judge.hpp"
#include "verdict/systematic.hpp"

namespace moe {
namespace {

// Rows `tokens` of a [T, width] buffer.
std::vector<float> rows_of(const Values& v, const std::vector<std::int64_t>& tokens, std::int64_t width) {
  std::vector<float> r(tokens.size() * std::size_t(width));
  for (std::size_t i = 0; i < tokens.size(); ++i)
    std::copy_n(v.begin() + tokens[i] * width, width, r.begin() + std::int64_t(i) * width);
  return r;
}

}  // namespace

Envelope simulate_envelope(const ProblemSpec& p, const Checkpoint& pristine, const RoutingResult& routing,
                           const Values& contract, const Values& ideal, const Values& slots) {
  Envelope e;
  e.tokens = p.tokens;
  e.sampled = ensemble_tokens(p.tokens);
  const std::int64_t n = std::int64_t(e.sampled.size()), h = p.hidden, k = routing.k;
  if (n == 0) return e;
  EnsembleSpec spec;
  spec.seed = p.seed ^ 0x656e76656c6f7065ull;  // "envelope": the members' draws, a stream of their own
  spec.tokens = e.sampled;
  EnsembleSpec rounding = spec;
  rounding.seed = spec.seed + 1;
  rounding.act_noise = half_ulp_noise(p.intermediate);
  rounding.gemm_noise = false;
  const std::vector<std::vector<Values>> groups = reference_ensembles(p, pristine, routing, {spec, rounding});
  const std::vector<Values>& members = groups[0];
  const std::vector<Values>& rounding_members = groups[1];
  e.model = fmt::format("members={} tokens={}/{} accum={}", spec.members, n, p.tokens,
                        p.accum_bits >= 24 ? "f32" : fmt::format("mma{}", p.accum_bits));

  const std::vector<float> ref = rows_of(contract, e.sampled, h), ide = rows_of(ideal, e.sampled, h);
  const std::vector<float> sub_slots = slots.empty() ? std::vector<float>{} : rows_of(slots, e.sampled, k * h);
  RoutingResult r;
  r.tokens = n;
  r.k = routing.k;
  for (std::int64_t t : e.sampled)
    for (std::int64_t j = 0; j < k; ++j) {
      r.ids.push_back(routing.ids[t * k + j]);
      r.weights.push_back(routing.weights[t * k + j]);
    }
  const Thresholds th = default_thresholds(p, Tier::statistical);
  auto measure = [&](const Values& m) {
    Tensor out("envelope_member", p.output_dtype, {n, h});
    for (std::int64_t i = 0; i < n * h; ++i) store_element(out, i, m[i]);
    const Judgement j = judge(ref, ide, out, n, h, th, r);
    if (e.token_noise.empty()) e.token_noise = j.token_noise;
    EnvelopeMember em;
    em.token_cos = j.token_cos;
    em.token_rel = j.token_rel;
    em.mismatch_fraction = j.mismatch_fraction;
    em.systematic = systematic_checks({{ref.data(), ref.size()}, out, n, h, r, p.first_local_expert(), p.local_experts(),
                                       {sub_slots.data(), sub_slots.size()}},
                                      th.systematic);
    return em;
  };
  for (const Values& m : members) e.members.push_back(measure(m));
  // The rounding ensemble's members: only their statistics' z are used (the variance of each scalar statistic).
  for (const Values& m : rounding_members) {
    EnvelopeMember em = measure(m);
    em.token_cos.clear();
    em.token_rel.clear();
    e.rounding.push_back(std::move(em));
  }
  return e;
}

}  // namespace moe
