#include "reference/moe/ensemble.hpp"

#include <cmath>
#include <string>

#include "fixtures/distributions.hpp"
#include "fixtures/error.hpp"
#include "fixtures/philox.hpp"
#include "formats/bf16.hpp"
#include "formats/fp16.hpp"
#include "formats/omp_errors.hpp"
#include "reference/moe/act_quant.hpp"
#include "reference/moe/activation.hpp"
#include "reference/moe/expert_gemm.hpp"

namespace moe {
using namespace engine;

namespace {

struct MemberKeys {
  PhiloxKey gemm1, act, gemm2;
};

// Unit-variance draws xi_i, uniform on [-sqrt(3), sqrt(3)]: each Philox4x32-10 call gives four (index i takes word
// i % 4 of the call at counter i / 4), and a stream read in index order calls it once per four draws. The
// members draw millions of them, and their distribution only has to be a zero-mean unit-variance perturbation.
// A stream is (key, slot): each slot's draws have a counter word of their own, so slots of different widths (a
// routed and a shared expert's inter) never share a draw.
class Noise {
 public:
  explicit Noise(PhiloxKey key) : key_(key) {}
  double operator()(std::uint64_t slot, std::uint64_t i) {
    const std::uint64_t block = i >> 2;
    if (block != block_ || slot != slot_) {
      words_ = philox4x32_10({std::uint32_t(block), std::uint32_t(block >> 32), std::uint32_t(slot),
                              std::uint32_t(slot >> 32)}, key_);
      block_ = block;
      slot_ = slot;
    }
    return (double(words_[i & 3]) * 0x1p-32 - 0.5) * 3.4641016151377544;  // sqrt(12)
  }

 private:
  PhiloxKey key_;
  std::uint64_t block_ = ~std::uint64_t(0), slot_ = ~std::uint64_t(0);
  PhiloxCounter words_{};
};

// One draw of a GEMM output's accumulation error (ensemble.hpp): scale 2^-bits ||a|| ||w||, biased toward zero by
// kTruncationBias scales where the accumulator keeps fewer than fp32's 24 bits. sigma_a: 2^-bits ||a|| (the row's
// part, computed once per row); w_norm: ||w|| of the output's weight row (once per job).
float accumulation_error(float v, bool truncates, double sigma_a, double w_norm, Noise& noise, std::uint64_t slot,
                         std::uint64_t i) {
  const double bias = truncates ? kTruncationBias * (v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0) : 0.0;
  return float(sigma_a * w_norm * (noise(slot, i) - bias));
}

// Square roots of row_sq, in place: the weight rows' norms.
void to_norms(std::vector<float>& sq) {
  for (float& v : sq) v = std::sqrt(v);
}

// One member's draws: its streams and what it perturbs (its group's EnsembleSpec).
struct Member {
  MemberKeys keys;
  double act_noise;
  bool gemm_noise;
  double gemm_scale;
  bool truncation;
};

struct Run {
  const ProblemSpec& s;
  int members;
  std::vector<Member> m;
  std::int64_t n_tok, k, per_token;
  LargeVector<float> slots;  // [members][n_tok][per_token][H]; a slot no job writes is never read (reduce_token)
  float* slot(int m, std::int64_t sub_slot) { return slots.data() + (std::int64_t(m) * n_tok * per_token + sub_slot) * s.hidden; }
};

void run_expert_members(Run& r, const ExpertJob& job, const float* x, const MapMat<float>* xq) {
  const ProblemSpec& s = r.s;
  const std::int64_t h = s.hidden, inter = job.inter, n = std::int64_t(job.rows.size()), nm = n * r.members;
  const bool weight_on_input = s.router_weight_on == RouterWeightOn::input && !job.shared;
  const bool finalize = s.router_weight_at == RouterWeightAt::finalize && !weight_on_input;
  const int bits = gemm_accum_bits(s, *job.quant);
  LargeVector<float> a_buf(static_cast<std::size_t>(n * h)), h1_buf(static_cast<std::size_t>(n * 2 * inter)),
      zm_buf(static_cast<std::size_t>(nm * inter)), ym_buf(static_cast<std::size_t>(nm * h)), wbuf;
  std::vector<float> sq13(static_cast<std::size_t>(2 * inter)), sq2(static_cast<std::size_t>(h)), hm(static_cast<std::size_t>(2 * inter));
  MapMat<float> a(a_buf.data(), n, h), h1(h1_buf.data(), n, 2 * inter), zm(zm_buf.data(), nm, inter), ym(ym_buf.data(), nm, h);
  for (std::int64_t i = 0; i < n; ++i) {
    const Assignment& as = job.rows[i];
    if (weight_on_input) {
      for (std::int64_t c = 0; c < h; ++c) a(i, c) = float(x[as.token * h + c]) * as.weight;
      round_to_dtype(a.row(i).data(), h, s.input_dtype);
    } else if (xq) {
      a.row(i) = xq->row(as.token);
    } else {
      for (std::int64_t c = 0; c < h; ++c) a(i, c) = x[as.token * h + c];
    }
  }
  if (weight_on_input) fake_quantize_activation_rows(a.data(), n, h, *job.quant);
  gemm_with_dequant(job, WeightMatrix::w13, h, a, h1, wbuf, sq13.data());
  to_norms(sq13);
  const bool truncates = bits < 24;
  const float* b13 = job.weights->w13_bias.empty() ? nullptr : job.weights->w13_bias.span<float>().data() + job.index * 2 * inter;
  ActivationParams ap{s.activation, s.layout, s.swiglu_alpha, s.swiglu_limit, !job.shared || s.clamp_shared, s.act_gate_dtype};
  for (int m = 0; m < r.members; ++m) {
    const Member& mb = r.m[std::size_t(m)];
    Noise gemm1(mb.keys.gemm1), act(mb.keys.act);
    const bool biased = truncates && mb.truncation;
    for (std::int64_t i = 0; i < n; ++i) {
      const Assignment& as = job.rows[i];
      const double sigma_a = mb.gemm_scale * std::ldexp(1.0, -bits) * a.row(i).norm();
      const std::uint64_t slot = std::uint64_t(as.slot);
      for (std::int64_t c = 0; c < 2 * inter; ++c) {
        const float v = h1(i, c);
        hm[c] = mb.gemm_noise ? v + accumulation_error(v, biased, sigma_a, sq13[c], gemm1, slot, c) : v;
        if (b13) hm[c] += b13[c];
      }
      round_point(hm.data(), 2 * inter, s.gate_up_dtype);
      float* z = zm.row(m * n + i).data();
      apply_activation(hm.data(), z, inter, ap);
      for (std::int64_t c = 0; c < inter; ++c) z[c] *= float(1.0 + mb.act_noise * act(slot, c));
    }
  }
  round_point(zm.data(), nm * inter, s.intermediate);
  fake_quantize_activation_rows(zm.data(), nm, inter, *job.quant);
  gemm_with_dequant(job, WeightMatrix::w2, h, zm, ym, wbuf, sq2.data());
  to_norms(sq2);
  const float* b2 = job.weights->w2_bias.empty() ? nullptr : job.weights->w2_bias.span<float>().data() + job.index * h;
  for (int m = 0; m < r.members; ++m) {
    const Member& mb = r.m[std::size_t(m)];
    Noise gemm2(mb.keys.gemm2);
    const bool biased = truncates && mb.truncation;
    for (std::int64_t i = 0; i < n; ++i) {
      const Assignment& as = job.rows[i];
      const std::int64_t row = m * n + i;
      const double sigma_z = mb.gemm_scale * std::ldexp(1.0, -bits) * zm.row(row).norm();
      const float w = weight_on_input || finalize ? 1.0f : as.weight;
      float* dst = r.slot(m, as.slot);
      const std::uint64_t slot = std::uint64_t(as.slot);
      for (std::int64_t c = 0; c < h; ++c) {
        const float v = ym(row, c);
        const float y = mb.gemm_noise ? v + accumulation_error(v, biased, sigma_z, sq2[c], gemm2, slot, c) : v;
        dst[c] = (y + (b2 ? b2[c] : 0.0f)) * w;
      }
      round_point(dst, h, s.slot_dtype);
    }
  }
}

}  // namespace

std::vector<std::int64_t> ensemble_tokens(std::int64_t tokens, std::int64_t cap) {
  const std::int64_t n = std::min(tokens, cap);
  std::vector<std::int64_t> t(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) t[i] = n == tokens ? i : i * tokens / n;
  return t;
}

double half_ulp_noise(IntermediateDtype d) {
  return std::ldexp(1.0, d == IntermediateDtype::bf16 ? -9 : d == IntermediateDtype::f16 ? -12 : -25);
}

int gemm_accum_bits(const ProblemSpec& p, const QuantScheme& q) {
  const bool narrow_weight = q.weight != WeightFormat::bf16 && q.weight != WeightFormat::fp16;
  return narrow_weight && q.act != ActFormat::none ? p.accum_bits : 24;
}

std::vector<std::vector<Values>> reference_ensembles(const ProblemSpec& s, const Checkpoint& c,
                                                     const RoutingResult& routing, const std::vector<EnsembleSpec>& groups) {
  if (groups.empty()) return {};
  const EnsembleSpec& e = groups.front();
  for (const EnsembleSpec& g : groups)
    if (g.tokens != e.tokens)
      throw_harness_error("reference", "the ensembles of one pass simulate different tokens",
                          "give every EnsembleSpec of a reference_ensembles call the same tokens");
  const std::int64_t h = s.hidden, k = routing.k, ns = s.n_shared, per_token = k + ns, n_tok = std::int64_t(e.tokens.size());
  Run r{s, 0, {}, n_tok, k, per_token, {}};
  for (const EnsembleSpec& g : groups)
    for (int m = 0; m < g.members; ++m) {
      const std::string tag = "envelope/member" + std::to_string(m);
      r.m.push_back({{stream_key(g.seed, tag + "/gemm1"), stream_key(g.seed, tag + "/act"), stream_key(g.seed, tag + "/gemm2")},
                     g.act_noise, g.gemm_noise, g.gemm_scale, g.truncation});
    }
  r.members = int(r.m.size());
  // The sampled tokens' inputs, decoded and quantized per token and scheme as the contract does.
  std::vector<float> x(static_cast<std::size_t>(n_tok * h));
  auto bits = c.x.span<std::uint16_t>();
  for (std::int64_t i = 0; i < n_tok; ++i)
    for (std::int64_t col = 0; col < h; ++col) {
      const std::uint16_t b = bits[e.tokens[i] * h + col];
      x[i * h + col] = s.input_dtype == DType::bf16 ? bf16_to_f32(b) : fp16_to_f32(b);
    }
  std::vector<float> xq_r(x), xq_s(ns > 0 ? x : std::vector<float>{});
  fake_quantize_activation_rows(xq_r.data(), n_tok, h, s.quant);
  if (ns > 0) fake_quantize_activation_rows(xq_s.data(), n_tok, h, s.shared_quant);
  const MapMat<float> xq_routed(xq_r.data(), n_tok, h), xq_shared(xq_s.data(), ns > 0 ? n_tok : 0, h);

  const std::int64_t el = s.local_experts(), first = s.first_local_expert();
  std::vector<ExpertJob> jobs(static_cast<std::size_t>(el));
  for (std::int64_t ex = 0; ex < el; ++ex) jobs[ex] = ExpertJob{&c.routed, &s.quant, ex, s.local_inter(), false, {}};
  std::vector<char> written(static_cast<std::size_t>(n_tok * per_token), 0);
  std::vector<float> slot_weight(static_cast<std::size_t>(n_tok * per_token), 1.0f);
  for (std::int64_t i = 0; i < n_tok; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t g = routing.ids[e.tokens[i] * k + j];
      if (g < first || g >= first + el) continue;
      const float w = routing.weights[e.tokens[i] * k + j];
      jobs[g - first].rows.push_back({i, i * per_token + j, w});
      written[i * per_token + j] = 1;
      slot_weight[i * per_token + j] = w;
    }
  if (s.ep_rank == 0)
    for (std::int64_t ex = 0; ex < ns; ++ex) {
      ExpertJob job{&c.shared, &s.shared_quant, ex, s.local_shared_inter(), true, {}};
      for (std::int64_t i = 0; i < n_tok; ++i) {
        job.rows.push_back({i, i * per_token + k + ex, 1.0f});
        written[i * per_token + k + ex] = 1;
      }
      jobs.push_back(std::move(job));
    }
  std::erase_if(jobs, [](const ExpertJob& j) { return j.rows.empty(); });
  r.slots.resize(static_cast<std::size_t>(std::int64_t(r.members) * n_tok * per_token * h));
  OmpErrors job_errors;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t j = 0; j < jobs.size(); ++j)
    job_errors.run([&] {
      const bool on_input = s.router_weight_on == RouterWeightOn::input && !jobs[j].shared;
      run_expert_members(r, jobs[j], x.data(), on_input ? nullptr : jobs[j].shared ? &xq_shared : &xq_routed);
    });
  job_errors.rethrow();

  const bool finalize = s.router_weight_at == RouterWeightAt::finalize && s.router_weight_on == RouterWeightOn::output;
  std::vector<std::vector<Values>> out(groups.size());
  int m = 0;
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (int gm = 0; gm < groups[g].members; ++gm, ++m) {
      Values& o = out[g].emplace_back(static_cast<std::size_t>(n_tok * h));
      for (std::int64_t i = 0; i < n_tok; ++i)
        reduce_token<float>(s, true, k, per_token, r.slot(m, i * per_token), written.data() + i * per_token,
                            finalize ? slot_weight.data() + i * per_token : nullptr, o.data() + i * h);
    }
  return out;
}

std::vector<Values> reference_ensemble(const ProblemSpec& s, const Checkpoint& c, const RoutingResult& routing,
                                       const EnsembleSpec& e) {
  return std::move(reference_ensembles(s, c, routing, {e}).front());
}

}  // namespace moe
