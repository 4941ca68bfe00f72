#include "kernels/host/host_contract_kernel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <vector>

#include "fixtures/omp_errors.hpp"
#include "kernels/common/output_sums.hpp"
#include "kernels/convert/fn_to_fnuz.hpp"
#include "reference/formats/bf16.hpp"
#include "reference/formats/e2m1.hpp"
#include "reference/formats/e8m0.hpp"
#include "reference/formats/fp16.hpp"
#include "reference/formats/fp8.hpp"
#include "reference/formats/minifloat.hpp"
#include "reference/formats/tensor_element.hpp"
#include "reference/moe/activation.hpp"
#include "reference/quant/fp8_quant.hpp"
#include "reference/quant/mx_quant.hpp"

namespace moe {
namespace {

// One expert weight matrix as the kernel sees it: codes, scales and how to index them.
struct MatrixView {
  const ExpertWeights* w;
  const QuantScheme* q;
  bool is13;
  std::int64_t expert, rows, cols, inter;
};

// The bug this kernel instance carries (Mutation::none for the correct kernel) and what it needs to know.
struct Bug {
  Mutation m = Mutation::none;
  std::int64_t first_hit_expert = -1;  // e8m0_scale_off_by_one
  float tensor_scale = 0.0f;           // per_tensor_act_scale: one scale for all tokens' stage-1 input
};

// Decodes row r of the view into out[0..cols): decode(code) * scale, fp32.
void decode_row(const MatrixView& m, std::int64_t r, float* out, const Bug& bug) {
  const Tensor& el = m.is13 ? m.w->w13 : m.w->w2;
  const Tensor& sc = m.is13 ? m.w->w13_scale : m.w->w2_scale;
  const std::int64_t base = (m.expert * m.rows + r);
  switch (m.q->weight) {
    case WeightFormat::bf16:
      for (std::int64_t c = 0; c < m.cols; ++c) out[c] = bf16_to_f32(el.span<std::uint16_t>()[base * m.cols + c]);
      return;
    case WeightFormat::fp16:
      for (std::int64_t c = 0; c < m.cols; ++c) out[c] = fp16_to_f32(el.span<std::uint16_t>()[base * m.cols + c]);
      return;
    case WeightFormat::fp8_tensor: case WeightFormat::fp8_channel: case WeightFormat::fp8_block: {
      // The stored dtype decides the decoding: a kernel's prepare() may have converted fn -> fnuz in place.
      const float* table = decode_table(el.dtype() == DType::e4m3fnuz ? kE4M3Fnuz : kE4M3Fn).value;
      const std::uint8_t* codes = el.span<std::uint8_t>().data() + base * m.cols;
      const float* s = sc.span<float>().data();
      for (std::int64_t c = 0; c < m.cols; ++c) {
        float scale;
        if (m.q->weight == WeightFormat::fp8_tensor) {
          scale = s[m.expert];
        } else if (m.q->weight == WeightFormat::fp8_channel) {
          scale = s[base];
        } else {
          const std::int64_t cb = (m.cols + 127) / 128;
          if (m.is13) {
            const std::int64_t half_blocks = (m.inter + 127) / 128;
            const std::int64_t rb = r < m.inter ? r / 128 : half_blocks + (r - m.inter) / 128;
            scale = s[(m.expert * 2 * half_blocks + rb) * cb + c / 128];
          } else {
            scale = s[(m.expert * ((m.rows + 127) / 128) + r / 128) * cb + c / 128];
          }
        }
        out[c] = table[codes[c]] * scale;
      }
      return;
    }
    case WeightFormat::mxfp8: case WeightFormat::mxfp4: {
      const bool fp4 = m.q->weight == WeightFormat::mxfp4;
      const float* table = decode_table(fp4 ? kE2M1 : kE4M3Fn).value;
      const std::uint8_t* sbytes = sc.span<std::uint8_t>().data() + base * (m.cols / 32);
      const std::uint8_t* bytes = el.span<std::uint8_t>().data() + base * (fp4 ? m.cols / 2 : m.cols);
      const int nib = bug.m == Mutation::fp4_nibbles_swapped ? 1 : 0;
      const bool bump = bug.m == Mutation::e8m0_scale_off_by_one && m.is13 && m.expert == bug.first_hit_expert && r == 0;
      for (std::int64_t c = 0; c < m.cols; ++c) {
        const std::uint8_t code = fp4 ? e2m1_unpack(bytes[c / 2], int(c % 2) ^ nib) : bytes[c];
        const std::uint8_t sc = std::uint8_t(sbytes[c / 32] + ((bump && c < 32) ? 1 : 0));
        out[c] = table[code] * e8m0_decode(sc, m.q->e8m0_edges);
      }
      return;
    }
  }
}

// The activation quantization a kernel applies to one row before a GEMM, returned dequantized (fp32).
void quantize_activation_row(std::vector<float>& v, const QuantScheme& q, float forced_scale = 0.0f) {
  const std::int64_t k = std::int64_t(v.size());
  if (q.act == ActFormat::none) return;
  if (forced_scale > 0.0f && q.act == ActFormat::fp8_token) {  // per_tensor_act_scale mutation
    const float qmax = q.act_qmax > 0 ? q.act_qmax : e4m3_max(q.flavor);
    const float* table = decode_table(e4m3_spec(q.flavor)).value;
    for (auto& x : v) x = table[minifloat_encode(e4m3_spec(q.flavor), std::clamp(x / forced_scale, -qmax, qmax))] * forced_scale;
    return;
  }
  std::vector<std::uint8_t> codes(v.size());
  if (q.act == ActFormat::mxfp8) {
    std::vector<std::uint8_t> scales(v.size() / 32);
    quantize_mx(v.data(), 1, k, MxElement::e4m3, q.mx_mode, codes.data(), scales.data());
    const float* table = decode_table(kE4M3Fn).value;
    for (std::int64_t c = 0; c < k; ++c) v[c] = table[codes[c]] * e8m0_decode(scales[c / 32], q.e8m0_edges);
    return;
  }
  const std::int64_t group = q.act == ActFormat::fp8_token ? k : 128;
  std::vector<float> scales(static_cast<std::size_t>((k + group - 1) / group));
  const Fp8Recipe recipe{q.flavor, q.act_qmax > 0 ? q.act_qmax : e4m3_max(q.flavor), q.act_amax_floor,
                         q.act_scale_pow2 ? ScaleRounding::pow2_ceil : ScaleRounding::exact};
  quantize_fp8_blocked(v.data(), 1, k, {1, group}, recipe, codes.data(), scales.data());
  const float* table = decode_table(e4m3_spec(q.flavor)).value;
  for (std::int64_t c = 0; c < k; ++c) v[c] = table[codes[c]] * scales[c / group];
}

float round_to(float v, IntermediateDtype d) {
  return d == IntermediateDtype::bf16 ? round_to_bf16(v) : d == IntermediateDtype::f16 ? round_to_fp16(v) : v;
}

// One expert applied to one input row: y = W2 * act(W13 * a + b13) + b2.
std::vector<float> expert_forward(const ProblemSpec& p, const ExpertWeights& w, const QuantScheme& q, std::int64_t e,
                                  std::int64_t inter, std::vector<float> a, bool shared, const Bug& bug) {
  const std::int64_t h = p.hidden;
  quantize_activation_row(a, q, shared ? 0.0f : bug.tensor_scale);
  std::vector<float> row(static_cast<std::size_t>(std::max(h, inter))), hv(static_cast<std::size_t>(2 * inter));
  const MatrixView w13{&w, &q, true, e, 2 * inter, h, inter}, w2{&w, &q, false, e, h, inter, inter};
  const bool bf16_acc = bug.m == Mutation::bf16_accumulation;
  const bool biases = bug.m != Mutation::biases_dropped;
  for (std::int64_t r = 0; r < 2 * inter; ++r) {
    decode_row(w13, r, row.data(), bug);
    float acc = 0.0f;
    for (std::int64_t c = 0; c < h; ++c) acc = bf16_acc ? round_to_bf16(acc + a[c] * row[c]) : acc + a[c] * row[c];
    if (biases && !w.w13_bias.empty()) acc += w.w13_bias.span<float>()[e * 2 * inter + r];
    hv[r] = acc;
  }
  ActivationParams ap{p.activation, p.layout, p.swiglu_alpha, p.swiglu_limit, !shared || p.clamp_shared};
  if (bug.m == Mutation::gate_up_swapped)
    ap.layout = p.layout == GateUpLayout::gate_up ? GateUpLayout::up_gate : GateUpLayout::gate_up;
  if (bug.m == Mutation::swiglu_chunked_split) ap.layout = GateUpLayout::gate_up;
  if (bug.m == Mutation::swiglu_clamp_dropped) ap.clamp = false;
  if (bug.m == Mutation::shared_clamp_when_disabled && shared) ap.clamp = true;
  std::vector<float> z(static_cast<std::size_t>(inter));
  apply_activation(hv.data(), z.data(), inter, ap);
  for (auto& v : z) v = round_to(v, p.intermediate);
  quantize_activation_row(z, q);
  std::vector<float> y(static_cast<std::size_t>(h));
  for (std::int64_t r = 0; r < h; ++r) {
    decode_row(w2, r, row.data(), bug);
    float acc = 0.0f;
    for (std::int64_t i = 0; i < inter; ++i) acc = bf16_acc ? round_to_bf16(acc + z[i] * row[i]) : acc + z[i] * row[i];
    if (biases && !w.w2_bias.empty()) acc += w.w2_bias.span<float>()[e * h + r];
    y[r] = acc;
  }
  return y;
}

}  // namespace

double HostContractKernel::work_flops(const ProblemSpec& p) {
  return 2.0 * double(p.tokens) * (double(p.topk) * 3.0 * double(p.hidden) * double(p.local_inter()) +
                                   double(p.n_shared) * 3.0 * double(p.hidden) * double(p.local_shared_inter()));
}

Support HostContractKernel::supports(const ProblemSpec& p, const DeviceInfo*) const {
  const double w = work_flops(p);
  if (w > budget_)
    return Support::no(fmt::format("work {:.3g} FLOP is above the host kernel's budget {:.3g} FLOP (raise it with --host-budget)", w, budget_));
  return Support::yes();
}

void HostContractKernel::prepare(const ProblemSpec& p, Checkpoint& c) {
  // The fnuz mutants emulate a gfx942 kernel that converts an e4m3fn checkpoint in place (kernels/convert), badly.
  apply_fnuz_conversion_mutant(mutation_, c);
}

RunInfo HostContractKernel::run(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& routing, Tensor& out) {
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t t = p.tokens, h = p.hidden, k = routing.k;
  const std::int64_t first = p.first_local_expert(), local = p.local_experts();
  Bug bug;
  bug.m = mutation_;
  bug.first_hit_expert = first_hit_local_expert(p, routing);
  auto x_at = [&](std::int64_t i) {
    const std::uint16_t b = c.x.span<std::uint16_t>()[i];
    return p.input_dtype == DType::bf16 ? bf16_to_f32(b) : fp16_to_f32(b);
  };
  if (mutation_ == Mutation::per_tensor_act_scale) bug.tensor_scale = per_tensor_act_scale(p, c);
  // per_k and separate keep every (token, k) result before reducing; fused_atomic accumulates as it goes. On one
  // CPU thread per token the three give the same sums in the same order, which is the contract.
  const bool keep_slots = p.reduce != ReduceMode::fused_atomic;
  OmpErrors errors;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t tok = 0; tok < t; ++tok) errors.run([&] {
    if (mutation_ == Mutation::last_token_unwritten && tok == t - 1) return;
    std::vector<float> x(static_cast<std::size_t>(h));
    for (std::int64_t col = 0; col < h; ++col) x[col] = x_at(tok * h + col);
    std::vector<float> acc(static_cast<std::size_t>(h), 0.0f);
    std::vector<std::vector<float>> slots;
    float prob_sum = 1.0f;  // routing_not_renormalized: what the top-k softmax probabilities sum to
    if (mutation_ == Mutation::routing_not_renormalized) prob_sum = selected_probability_sum(p, c, routing, tok);
    for (std::int64_t j = 0; j < k; ++j) {
      std::int64_t e = routing.ids[tok * k + j] - first;
      if (e < 0 || e >= local) {
        if (mutation_ != Mutation::ep_sums_nonlocal) continue;
        e = ((e % local) + local) % local;
      }
      if (mutation_ == Mutation::one_token_wrong_expert && tok == 0 && j == 0) e = (e + 1) % local;
      float wgt = routing.weights[tok * k + j];
      switch (mutation_) {
        case Mutation::router_weight_dropped: wgt = 1.0f; break;
        case Mutation::router_weight_twice: wgt *= wgt; break;
        case Mutation::routing_not_renormalized: wgt *= prob_sum; break;
        case Mutation::routed_scaling_twice: wgt *= p.routing.routed_scaling; break;
        default: break;
      }
      std::vector<float> y;
      if (p.router_weight_on == RouterWeightOn::input) {
        std::vector<float> xi(x);
        for (auto& v : xi) v = round_to(v * wgt, p.input_dtype == DType::bf16 ? IntermediateDtype::bf16 : IntermediateDtype::f16);
        y = expert_forward(p, c.routed, p.quant, e, p.local_inter(), std::move(xi), false, bug);
      } else {
        y = expert_forward(p, c.routed, p.quant, e, p.local_inter(), x, false, bug);
        for (auto& v : y) v *= wgt;
      }
      if (mutation_ == Mutation::lost_atomic_update && tok == 0 && j == 1) continue;  // the update another lane overwrote
      if (keep_slots) slots.push_back(std::move(y));
      else for (std::int64_t col = 0; col < h; ++col) acc[col] += y[col];
    }
    for (const auto& y : slots)
      for (std::int64_t col = 0; col < h; ++col) acc[col] += y[col];
    // A separate shared path: the shared experts' own output and the routed output summed as the model does
    // (kernels/common/output_sums.hpp).
    const bool separate = p.shared_path == SharedPath::separate;
    std::vector<float> shared(static_cast<std::size_t>(h), 0.0f);
    if (p.ep_rank == 0 && mutation_ != Mutation::shared_expert_dropped)
      for (int s = 0; s < p.n_shared; ++s) {
        const auto y = expert_forward(p, c.shared, p.shared_quant, s, p.local_shared_inter(), x, true, bug);
        for (std::int64_t col = 0; col < h; ++col) (separate ? shared : acc)[col] += y[col];
      }
    for (std::int64_t col = 0; col < h; ++col)
      store_element(out, tok * h + col, separate ? separate_paths_sum(acc[col], shared[col], out.dtype()) : acc[col]);
  });
  errors.rethrow();
  RunInfo info;
  info.variant = std::string("host/") + std::string(name(p.reduce));
  info.median_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  info.timed_repeats = 1;
  return info;
}

}  // namespace moe
