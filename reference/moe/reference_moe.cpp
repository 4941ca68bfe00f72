#include "reference/moe/reference_moe.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <memory>

#include "formats/bf16.hpp"
#include "formats/fp16.hpp"
#include "formats/omp_errors.hpp"
#include "reference/moe/act_quant.hpp"
#include "reference/moe/activation.hpp"
#include "reference/moe/expert_dequant.hpp"
#include "reference/moe/expert_gemm.hpp"
#include "reference/moe/large_buffer.hpp"

namespace moe {
namespace {
using namespace engine;

// Per-thread scratch, grown to the largest job seen and kept across calls (OpenMP keeps its threads), so the hot
// path neither allocates nor touches fresh pages after the first call of a given size.
template <class S>
struct Scratch {
  LargeVector<S> a, h1, z, y, w;
};
template <class S>
Scratch<S>& thread_scratch() {
  thread_local Scratch<S> s;
  return s;
}

template <class S>
void run_expert(const ProblemSpec& s, const ExpertJob& job, const S* x_in, const MapMat<S>* x_quant,
                ReferenceKind kind, S* slots) {
  const std::int64_t h = s.hidden, inter = job.inter, n = std::int64_t(job.rows.size());
  const bool contract = kind == ReferenceKind::contract;
  const bool weight_on_input = s.router_weight_on == RouterWeightOn::input && !job.shared;
  // weight=finalize (contract reference only): the slot keeps its unweighted value; the sum applies the weight.
  const bool finalize = contract && s.router_weight_at == RouterWeightAt::finalize && !weight_on_input;
  Scratch<S>& sc = thread_scratch<S>();
  sc.a.resize(static_cast<std::size_t>(n * h));
  sc.h1.resize(static_cast<std::size_t>(n * 2 * inter));
  sc.z.resize(static_cast<std::size_t>(n * inter));
  sc.y.resize(static_cast<std::size_t>(n * h));
  MapMat<S> a(sc.a.data(), n, h), h1(sc.h1.data(), n, 2 * inter), z(sc.z.data(), n, inter), y(sc.y.data(), n, h);
  for (std::int64_t i = 0; i < n; ++i) {
    const Assignment& as = job.rows[i];
    if (weight_on_input) {
      // Llama-4: x * w in fp32, rounded to the input dtype (what the model feeds the expert), then quantized.
      for (std::int64_t c = 0; c < h; ++c) a(i, c) = S(float(x_in[as.token * h + c]) * as.weight);
      if (contract) round_to_dtype(a.row(i).data(), h, s.input_dtype);
    } else if (x_quant) {
      a.row(i) = x_quant->row(as.token);
    } else {
      for (std::int64_t c = 0; c < h; ++c) a(i, c) = x_in[as.token * h + c];
    }
  }
  if (weight_on_input && contract) fake_quantize_activation_rows(a.data(), n, h, *job.quant);

  gemm_with_dequant(job, WeightMatrix::w13, h, a, h1, sc.w);
  if (!job.weights->w13_bias.empty()) {
    const float* b = job.weights->w13_bias.span<float>().data() + job.index * 2 * inter;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < 2 * inter; ++c) h1(i, c) += S(b[c]);
  }
  if (contract) round_point(h1.data(), n * 2 * inter, s.gate_up_dtype);  // h before the activation, bias included
  ActivationParams ap{s.activation, s.layout, s.swiglu_alpha, s.swiglu_limit, !job.shared || s.clamp_shared,
                      contract ? s.act_gate_dtype : IntermediateDtype::f32};
  for (std::int64_t i = 0; i < n; ++i) apply_activation(h1.row(i).data(), z.row(i).data(), inter, ap);
  if (contract) {
    round_to_dtype(z.data(), n * inter, s.intermediate);
    fake_quantize_activation_rows(z.data(), n, inter, *job.quant);
  }
  gemm_with_dequant(job, WeightMatrix::w2, h, z, y, sc.w);
  const float* b2 = job.weights->w2_bias.empty() ? nullptr : job.weights->w2_bias.span<float>().data() + job.index * h;
  for (std::int64_t i = 0; i < n; ++i) {
    const Assignment& as = job.rows[i];
    const S w = weight_on_input || finalize ? S(1) : S(as.weight);
    S* dst = slots + as.slot * h;
    for (std::int64_t c = 0; c < h; ++c) dst[c] = (y(i, c) + (b2 ? S(b2[c]) : S(0))) * w;
    if (contract) round_point(dst, h, s.slot_dtype);  // the slot's output as the top-k sum reads it
  }
}

template <class S>
Values run(const ProblemSpec& s, const Checkpoint& c, const RoutingResult& r, ReferenceKind kind, Values* slots_out) {
  const std::int64_t t = s.tokens, h = s.hidden, k = r.k, ns = s.n_shared;
  const std::int64_t per_token = k + ns;
  // Call-level buffers live in the calling thread's workspace, kept across calls like the per-thread scratch.
  thread_local LargeVector<S> x_storage, xq_storage, slot_storage;
  x_storage.resize(static_cast<std::size_t>(t * h));
  S* x = x_storage.data();
  {
    auto bits = c.x.span<std::uint16_t>();
    OmpErrors errors;
#pragma omp parallel for schedule(static) if (t * h > (1 << 16))
    for (std::int64_t i = 0; i < t * h; ++i)
      errors.run([&] { x[i] = S(s.input_dtype == DType::bf16 ? bf16_to_f32(bits[i]) : fp16_to_f32(bits[i])); });
    errors.rethrow();
  }
  // Stage-1 inputs quantized once per token per scheme (the contract quantizes x per token, not per expert).
  const bool contract = kind == ReferenceKind::contract;
  xq_storage.resize(static_cast<std::size_t>(t * h * (ns > 0 ? 2 : 1)));
  auto quantized_input = [&](const QuantScheme& q, S* dst) {
    OmpErrors errors;
#pragma omp parallel for schedule(static) if (t * h > (1 << 16))
    for (std::int64_t i = 0; i < t * h; ++i) errors.run([&] { dst[i] = x[i]; });
    errors.rethrow();
    if (contract) fake_quantize_activation_rows(dst, t, h, q);
    return MapMat<S>(dst, t, h);
  };
  const MapMat<S> xq_routed = quantized_input(s.quant, xq_storage.data());
  const MapMat<S> xq_shared = ns > 0 ? quantized_input(s.shared_quant, xq_storage.data() + t * h) : MapMat<S>(nullptr, 0, 0);

  std::vector<ExpertJob> jobs;
  const std::int64_t el = s.local_experts(), first = s.first_local_expert();
  jobs.resize(std::size_t(el));
  for (std::int64_t e = 0; e < el; ++e) jobs[e] = ExpertJob{&c.routed, &s.quant, e, s.local_inter(), false, {}};
  for (std::int64_t i = 0; i < t; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t g = r.ids[i * k + j];
      if (g < first || g >= first + el) continue;  // EP: another rank's expert contributes nothing here
      jobs[g - first].rows.push_back({i, i * per_token + j, r.weights[i * k + j]});
    }
  // Shared experts: every token, weight 1 (on EP, rank 0 adds them; see ProblemSpec).
  if (s.ep_rank == 0)
    for (std::int64_t e = 0; e < ns; ++e) {
      ExpertJob job{&c.shared, &s.shared_quant, e, s.local_shared_inter(), true, {}};
      for (std::int64_t i = 0; i < t; ++i) job.rows.push_back({i, i * per_token + k + e, 1.0f});
      jobs.push_back(std::move(job));
    }
  std::erase_if(jobs, [](const ExpertJob& j) { return j.rows.empty(); });
  // Largest first: better balance under dynamic scheduling.
  std::stable_sort(jobs.begin(), jobs.end(), [](auto& a, auto& b) { return a.rows.size() > b.rows.size(); });

  // One row per (token, slot), written by exactly one expert job. Left uninitialised (a zero-fill of this buffer
  // cost a third of a prefill run); the reduction reads only the slots some job wrote.
  slot_storage.resize(static_cast<std::size_t>(t * per_token * h));
  // The router weight each slot's sum multiplies it by under weight=finalize (1 for shared slots).
  const bool finalize = contract && s.router_weight_at == RouterWeightAt::finalize && s.router_weight_on == RouterWeightOn::output;
  std::vector<S> slot_weight(finalize ? static_cast<std::size_t>(t * per_token) : 0, S(1));
  if (finalize)
    for (const ExpertJob& job : jobs)
      if (!job.shared)
        for (const Assignment& as : job.rows) slot_weight[as.slot] = S(as.weight);
  S* slots = slot_storage.data();
  std::vector<char> written(static_cast<std::size_t>(t * per_token), 0);
  for (const ExpertJob& job : jobs)
    for (const Assignment& as : job.rows) written[as.slot] = 1;
  OmpErrors job_errors;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t j = 0; j < jobs.size(); ++j)
    job_errors.run([&] {
      const bool on_input = s.router_weight_on == RouterWeightOn::input && !jobs[j].shared;
      const MapMat<S>* xq = on_input ? nullptr : (jobs[j].shared ? &xq_shared : &xq_routed);
      run_expert<S>(s, jobs[j], x, xq, kind, slots);
    });
  job_errors.rethrow();

  if (slots_out) {
    slots_out->resize(static_cast<std::size_t>(t * k * h));
    float* so = slots_out->data();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < t; ++i)
      for (std::int64_t j = 0; j < k; ++j) {
        const S* src = slots + (i * per_token + j) * h;
        const bool on = written[i * per_token + j];
        const S w = finalize && on ? slot_weight[i * per_token + j] : S(1);
        for (std::int64_t col = 0; col < h; ++col) so[(i * k + j) * h + col] = on ? float(w * src[col]) : 0.0f;
      }
  }

  Values out(static_cast<std::size_t>(t * h));
  OmpErrors sum_errors;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < t; ++i) sum_errors.run([&] {
    reduce_token<S>(s, contract, k, per_token, slots + i * per_token * h, written.data() + i * per_token,
                    finalize ? slot_weight.data() + i * per_token : nullptr, out.data() + i * h);
  });
  sum_errors.rethrow();
  return out;
}

}  // namespace

Values reference_moe(const ProblemSpec& spec, const Checkpoint& ckpt, const RoutingResult& routing,
                     ReferenceKind kind, Precision precision, Values* slots) {
  return precision == Precision::fp64 ? run<double>(spec, ckpt, routing, kind, slots)
                                      : run<float>(spec, ckpt, routing, kind, slots);
}

}  // namespace moe
