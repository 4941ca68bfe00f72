#include "harness/pipeline/envelope_sim.hpp"

#include <fmt/format.h>

#include "fixtures/tensor_element.hpp"
#include "harness/pipeline/slot_steps.hpp"
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
  // The sparse ensemble where a GEMM accumulates with fewer bits than fp32 (a declared accum=mmaN on an 8-bit GEMM):
  // there the accumulation members, biased and at the declared bound, step many of the intermediate's codes where
  // the hardware steps a few. Where every GEMM accumulates in fp32 the accumulation members are that sparse already.
  // Its tokens are the case's own up to kSparseMaxTokens, in a pass of its own: the accumulation and rounding
  // members stay exactly what they are without it (a joint pass would change their GEMMs' row blocking).
  const bool narrow = narrow_accumulation(p);
  EnsembleSpec sparse = spec;
  sparse.seed = spec.seed + 2;
  sparse.members = kSparseMembers;
  sparse.gemm_scale = kSparseGemmScale;
  sparse.truncation = false;
  sparse.tokens = ensemble_tokens(p.tokens, kSparseMaxTokens);
  std::vector<std::vector<Values>> groups = reference_ensembles(p, pristine, routing, {spec, rounding});
  if (narrow) groups.push_back(std::move(reference_ensembles(p, pristine, routing, {sparse}).front()));
  e.model = fmt::format("members={} tokens={}/{} accum={}{}", spec.members, n, p.tokens,
                        p.accum_bits >= 24 ? "f32" : fmt::format("mma{}", p.accum_bits),
                        narrow ? fmt::format(" sparse={} on {} tokens", sparse.members, sparse.tokens.size()) : "");

  const Thresholds th = default_thresholds(p, Tier::statistical);
  // Each member measured like a kernel output on its group's tokens.
  // The sparse members' largest maxima components are explained by the slots' requantization steps, as the kernel's
  // are (SystematicInput::steps): the standard-error floor they set is for what no step explains. The accumulation
  // and rounding members stay unexplained: they bound a maximum's threshold and the scale as they did without.
  auto measure_all = [&](const std::vector<Values>& members, const std::vector<std::int64_t>& tokens, bool stats_only,
                         const SystematicInput::SlotSteps& steps) {
    const std::int64_t nt = std::int64_t(tokens.size());
    const std::vector<float> ref = rows_of(contract, tokens, h), ide = rows_of(ideal, tokens, h);
    const std::vector<float> sub_slots = slots.empty() ? std::vector<float>{} : rows_of(slots, tokens, k * h);
    RoutingResult r;
    r.tokens = nt;
    r.k = routing.k;
    for (std::int64_t t : tokens)
      for (std::int64_t j = 0; j < k; ++j) {
        r.ids.push_back(routing.ids[t * k + j]);
        r.weights.push_back(routing.weights[t * k + j]);
      }
    std::vector<EnvelopeMember> out;
    for (const Values& m : members) {
      Tensor o("envelope_member", p.output_dtype, {nt, h});
      for (std::int64_t i = 0; i < nt * h; ++i) store_element(o, i, m[i]);
      const Judgement j = judge(ref, ide, o, nt, h, th, r);
      if (!stats_only && e.token_noise.empty()) e.token_noise = j.token_noise;
      EnvelopeMember em;
      if (!stats_only) {
        em.token_cos = j.token_cos;
        em.token_rel = j.token_rel;
      }
      em.mismatch_fraction = j.mismatch_fraction;
      em.systematic = systematic_checks({{ref.data(), ref.size()}, o, nt, h, r, p.first_local_expert(),
                                         p.local_experts(), {sub_slots.data(), sub_slots.size()}, steps},
                                        th.systematic);
      out.push_back(std::move(em));
    }
    return out;
  };
  e.members = measure_all(groups[0], e.sampled, false, {});
  // The rounding and the sparse ensembles' members: only their statistics' z are used (each statistic's scale, a
  // maximum's threshold).
  e.rounding = measure_all(groups[1], e.sampled, true, {});
  if (narrow) e.sparse = measure_all(groups[2], sparse.tokens, true, case_slot_steps(p, &pristine, routing, sparse.tokens));
  return e;
}

}  // namespace moe
