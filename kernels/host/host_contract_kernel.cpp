#include "kernels/host/host_contract_kernel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <vector>

#include "fixtures/tensor_element.hpp"
#include "formats/bf16.hpp"
#include "formats/e2m1.hpp"
#include "formats/e8m0.hpp"
#include "formats/fp16.hpp"
#include "formats/fp8.hpp"
#include "formats/fp8_quant.hpp"
#include "formats/minifloat.hpp"
#include "formats/mx_quant.hpp"
#include "formats/omp_errors.hpp"
#include "formats/weight_format.hpp"
#include "kernels/common/output_sums.hpp"

namespace moe {
namespace {

// One expert weight matrix as the kernel sees it: codes, scales and how to index them.
struct MatrixView {
  const ExpertWeights* w;
  const QuantScheme* q;
  bool is13;
  std::int64_t expert, rows, cols, inter;
};

// Decodes row r of the view into out[0..cols): decode(code) * scale, fp32. The format table says where the codes
// and scales are; the element decoding follows the STORED dtype, since a kernel's prepare() may have converted
// fn -> fnuz in place. Scale blocks are located here with the kernel's own arithmetic.
void decode_row(const MatrixView& m, std::int64_t r, float* out, const HostKernelHooks& hooks) {
  const WeightFormatInfo& f = weight_format_info(m.q->weight);
  const Tensor& el = m.is13 ? m.w->w13 : m.w->w2;
  const Tensor& sc = m.is13 ? m.w->w13_scale : m.w->w2_scale;
  const std::int64_t base = (m.expert * m.rows + r);
  const std::int64_t row_bytes = m.cols * f.element_bits / 8;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(el.bytes()) + base * row_bytes;
  if (el.dtype() == DType::bf16 || el.dtype() == DType::f16) {
    const auto* h = reinterpret_cast<const std::uint16_t*>(bytes);
    for (std::int64_t c = 0; c < m.cols; ++c) out[c] = el.dtype() == DType::bf16 ? bf16_to_f32(h[c]) : fp16_to_f32(h[c]);
  } else {
    const float* table = decode_table(*minifloat_spec_of(el.dtype())).value;
    const int nib = f.element_bits == 4 ? hooks.e2m1_even_nibble() : 0;
    for (std::int64_t c = 0; c < m.cols; ++c)
      out[c] = table[f.element_bits == 4 ? e2m1_unpack(bytes[c / 2], int(c % 2) ^ nib) : bytes[c]];
  }
  if (f.scale == ScaleKind::none) return;
  // The scale grid: [ceil(rows / block_rows), ceil(cols / block_k)] per expert (0: one block), w13's gate and up
  // halves blocked separately.
  const std::int64_t br = f.block_rows == 0 ? m.rows : f.block_rows, bk = f.block_k == 0 ? m.cols : f.block_k;
  const std::int64_t grid_cols = (m.cols + bk - 1) / bk;
  std::int64_t grid_row = r / br, grid_rows = (m.rows + br - 1) / br;
  if (m.is13 && f.block_rows != 0) {
    const std::int64_t half_rows = (m.inter + br - 1) / br;
    grid_row = r < m.inter ? r / br : half_rows + (r - m.inter) / br;
    grid_rows = 2 * half_rows;
  }
  const std::int64_t first = (m.expert * grid_rows + grid_row) * grid_cols;
  if (f.scale == ScaleKind::f32) {
    const float* s = sc.span<float>().data() + first;
    for (std::int64_t c = 0; c < m.cols; ++c) out[c] *= s[c / bk];
    return;
  }
  thread_local std::vector<std::uint8_t> scratch;  // room for the row's scales where a hook changes them
  scratch.resize(static_cast<std::size_t>(grid_cols));
  const std::uint8_t* s =
      hooks.e8m0_row_scales(sc.span<std::uint8_t>().data() + first, grid_cols, m.is13, m.expert, r, scratch.data());
  for (std::int64_t c = 0; c < m.cols; ++c) out[c] *= e8m0_decode(s[c / bk], m.q->e8m0_edges);
}

// The activation quantization a kernel applies to one row before a GEMM, returned dequantized (fp32).
void quantize_activation_row(std::vector<float>& v, const QuantScheme& q, float forced_scale = 0.0f) {
  const std::int64_t k = std::int64_t(v.size());
  if (q.act == ActFormat::none) return;
  if (forced_scale > 0.0f && q.act == ActFormat::fp8_token) {  // a forced per-tensor scale (hook point)
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

// The kernel's gated activation of stage-1 output pair i in fp32 (its own code, not the reference's): gate and up
// read where the layout puts them, then the case's formula.
float gated(const float* h, std::int64_t inter, std::int64_t i, const GateParams& a) {
  const bool interleaved = a.layout == GateUpLayout::interleaved, gate_first = a.layout == GateUpLayout::gate_up;
  float g = h[interleaved ? 2 * i : gate_first ? i : inter + i];
  float u = h[interleaved ? 2 * i + 1 : gate_first ? inter + i : i];
  if (a.kind == Activation::swiglu_oai) {
    if (a.clamp) {
      g = std::min(g, a.limit);
      u = std::clamp(u, -a.limit, a.limit);
    }
    return (u + 1.0f) * g / (1.0f + std::exp(-a.alpha * g));
  }
  if (a.kind == Activation::silu) return g / (1.0f + std::exp(-g)) * u;
  if (a.kind == Activation::gelu_tanh) return 0.5f * g * (1.0f + std::tanh(0.7978845608028654f * (g + 0.044715f * g * g * g))) * u;
  return 0.5f * g * (1.0f + std::erf(g * 0.7071067811865476f)) * u;  // gelu_erf
}

float round_to(float v, IntermediateDtype d) {
  return d == IntermediateDtype::bf16 ? round_to_bf16(v) : d == IntermediateDtype::f16 ? round_to_fp16(v) : v;
}

// One expert applied to one input row: y = W2 * act(W13 * a + b13) + b2.
std::vector<float> expert_forward(const ProblemSpec& p, const ExpertWeights& w, const QuantScheme& q, std::int64_t e,
                                  std::int64_t inter, std::vector<float> a, bool shared,
                                  const HostKernelHooks& hooks) {
  const std::int64_t h = p.hidden;
  quantize_activation_row(a, q, shared ? 0.0f : hooks.forced_token_scale());
  std::vector<float> row(static_cast<std::size_t>(std::max(h, inter))), hv(static_cast<std::size_t>(2 * inter));
  const MatrixView w13{&w, &q, true, e, 2 * inter, h, inter}, w2{&w, &q, false, e, h, inter, inter};
  const bool bf16_acc = hooks.accumulate_in_bf16();
  for (std::int64_t r = 0; r < 2 * inter; ++r) {
    decode_row(w13, r, row.data(), hooks);
    float acc = 0.0f;
    for (std::int64_t c = 0; c < h; ++c) acc = bf16_acc ? round_to_bf16(acc + a[c] * row[c]) : acc + a[c] * row[c];
    if (!w.w13_bias.empty()) acc += w.w13_bias.span<float>()[e * 2 * inter + r];
    hv[r] = acc;
  }
  GateParams ap{p.activation, p.layout, p.swiglu_alpha, p.swiglu_limit, !shared || p.clamp_shared};
  hooks.activation(ap, shared);
  std::vector<float> z(static_cast<std::size_t>(inter));
  for (std::int64_t i = 0; i < inter; ++i) z[i] = round_to(gated(hv.data(), inter, i, ap), p.intermediate);
  quantize_activation_row(z, q);
  std::vector<float> y(static_cast<std::size_t>(h));
  for (std::int64_t r = 0; r < h; ++r) {
    decode_row(w2, r, row.data(), hooks);
    float acc = 0.0f;
    for (std::int64_t i = 0; i < inter; ++i) acc = bf16_acc ? round_to_bf16(acc + z[i] * row[i]) : acc + z[i] * row[i];
    if (!w.w2_bias.empty()) acc += w.w2_bias.span<float>()[e * h + r];
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

RunInfo HostContractKernel::run(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& routing, Tensor& out) {
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t t = p.tokens, h = p.hidden, k = routing.k;
  const std::int64_t first = p.first_local_expert(), local = p.local_experts();
  HostKernelHooks& hooks = *hooks_;
  hooks.begin_run(p, c, routing);
  auto x_at = [&](std::int64_t i) {
    const std::uint16_t b = c.x.span<std::uint16_t>()[i];
    return p.input_dtype == DType::bf16 ? bf16_to_f32(b) : fp16_to_f32(b);
  };
  // per_k and separate keep every (token, k) result before reducing; fused_atomic accumulates as it goes. On one
  // CPU thread per token the three give the same sums in the same order, which is the contract.
  const bool keep_slots = p.reduce != ReduceMode::fused_atomic;
  OmpErrors errors;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t tok = 0; tok < t; ++tok) errors.run([&] {
    std::vector<float> x(static_cast<std::size_t>(h));
    for (std::int64_t col = 0; col < h; ++col) x[col] = x_at(tok * h + col);
    std::vector<float> acc(static_cast<std::size_t>(h), 0.0f);
    std::vector<std::vector<float>> slots;
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t e = routing.ids[tok * k + j] - first;
      if (e < 0 || e >= local) continue;
      const float wgt = routing.weights[tok * k + j];
      std::vector<float> y;
      if (p.router_weight_on == RouterWeightOn::input) {
        std::vector<float> xi(x);
        for (auto& v : xi) v = round_to(v * wgt, p.input_dtype == DType::bf16 ? IntermediateDtype::bf16 : IntermediateDtype::f16);
        y = expert_forward(p, c.routed, p.quant, e, p.local_inter(), std::move(xi), false, hooks);
      } else {
        y = expert_forward(p, c.routed, p.quant, e, p.local_inter(), x, false, hooks);
        for (auto& v : y) v *= wgt;
      }
      if (!hooks.slot_summed(tok, j)) continue;
      if (keep_slots) slots.push_back(std::move(y));
      else for (std::int64_t col = 0; col < h; ++col) acc[col] += y[col];
    }
    for (const auto& y : slots)
      for (std::int64_t col = 0; col < h; ++col) acc[col] += y[col];
    // A separate shared path: the shared experts' own output and the routed output summed as the model does
    // (kernels/common/output_sums.hpp).
    const bool separate = p.shared_path == SharedPath::separate;
    std::vector<float> shared(static_cast<std::size_t>(h), 0.0f);
    if (p.ep_rank == 0)
      for (int s = 0; s < p.n_shared; ++s) {
        const auto y = expert_forward(p, c.shared, p.shared_quant, s, p.local_shared_inter(), x, true, hooks);
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
