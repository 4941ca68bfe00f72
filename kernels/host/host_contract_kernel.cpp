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

// Decodes row r of the view into out[c * stride] for c < cols: decode(code) * scale, fp32. The format table says
// where the codes and scales are; the element decoding follows the STORED dtype, since a kernel's prepare() may have
// converted fn -> fnuz in place. Scale blocks are located here with the kernel's own arithmetic.
void decode_row(const MatrixView& m, std::int64_t r, float* out, std::int64_t stride, const HostKernelHooks& hooks) {
  const WeightFormatInfo& f = weight_format_info(m.q->weight);
  const Tensor& el = m.is13 ? m.w->w13 : m.w->w2;
  const Tensor& sc = m.is13 ? m.w->w13_scale : m.w->w2_scale;
  const std::int64_t base = (m.expert * m.rows + r);
  const std::int64_t row_bytes = m.cols * f.element_bits / 8;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(el.bytes()) + base * row_bytes;
  if (el.dtype() == DType::bf16 || el.dtype() == DType::f16) {
    const auto* h = reinterpret_cast<const std::uint16_t*>(bytes);
    for (std::int64_t c = 0; c < m.cols; ++c)
      out[c * stride] = el.dtype() == DType::bf16 ? bf16_to_f32(h[c]) : fp16_to_f32(h[c]);
  } else {
    const float* table = decode_table(*minifloat_spec_of(el.dtype())).value;
    const int nib = f.element_bits == 4 ? hooks.e2m1_even_nibble() : 0;
    for (std::int64_t c = 0; c < m.cols; ++c)
      out[c * stride] = table[f.element_bits == 4 ? e2m1_unpack(bytes[c / 2], int(c % 2) ^ nib) : bytes[c]];
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
    // Each block's scale read once for its columns (the same value for every element of the block).
    const float* s = sc.span<float>().data() + first;
    for (std::int64_t c0 = 0; c0 < m.cols; c0 += bk)
      for (std::int64_t c = c0, end = std::min(c0 + bk, m.cols); c < end; ++c) out[c * stride] *= s[c0 / bk];
    return;
  }
  thread_local std::vector<std::uint8_t> scratch;  // room for the row's scales where a hook changes them
  scratch.resize(static_cast<std::size_t>(grid_cols));
  const std::uint8_t* s =
      hooks.e8m0_row_scales(sc.span<std::uint8_t>().data() + first, grid_cols, m.is13, m.expert, r, scratch.data());
  for (std::int64_t c0 = 0; c0 < m.cols; c0 += bk) {  // one e8m0 decode per block, not per element
    const float scale = e8m0_decode(s[c0 / bk], m.q->e8m0_edges);
    for (std::int64_t c = c0, end = std::min(c0 + bk, m.cols); c < end; ++c) out[c * stride] *= scale;
  }
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
                         q.act_scale_pow2 ? ScaleRounding::pow2_ceil : ScaleRounding::exact,
                         q.act_scale_op == ActScaleOp::reciprocal, q.act_scale_form == ActScaleForm::qmax_reciprocal};
  quantize_fp8_blocked(v.data(), 1, k, {1, group}, recipe, codes.data(), scales.data());
  const float* table = decode_table(e4m3_spec(q.flavor)).value;
  for (std::int64_t c = 0; c < k; ++c) v[c] = table[codes[c]] * scales[c / group];
}

float round_to(float v, IntermediateDtype d) {
  return d == IntermediateDtype::bf16 ? round_to_bf16(v) : d == IntermediateDtype::f16 ? round_to_fp16(v) : v;
}

// The kernel's gated activation of stage-1 output pair i in fp32 (its own code, not the reference's): gate and up
// read where the layout puts them, then the case's formula.
// With act_gate the gate's act(g) is rounded before the multiply (vLLM's silu_and_mul).
float gated(const float* h, std::int64_t inter, std::int64_t i, const GateParams& a) {
  const bool interleaved = a.layout == GateUpLayout::interleaved, gate_first = a.layout == GateUpLayout::gate_up;
  float g = h[interleaved ? 2 * i : gate_first ? i : inter + i];
  float u = h[interleaved ? 2 * i + 1 : gate_first ? inter + i : i];
  const bool gate_rounded = a.gate_round != IntermediateDtype::f32;
  if (a.kind == Activation::swiglu_oai) {
    if (a.clamp) {
      g = std::min(g, a.limit);
      u = std::clamp(u, -a.limit, a.limit);
    }
    if (gate_rounded) return (u + 1.0f) * round_to(g / (1.0f + std::exp(-a.alpha * g)), a.gate_round);
    return (u + 1.0f) * g / (1.0f + std::exp(-a.alpha * g));
  }
  float act = 0.0f;
  if (a.kind == Activation::silu) act = g / (1.0f + std::exp(-g));
  else if (a.kind == Activation::gelu_tanh) act = 0.5f * g * (1.0f + std::tanh(0.7978845608028654f * (g + 0.044715f * g * g * g)));
  else act = 0.5f * g * (1.0f + std::erf(g * 0.7071067811865476f));  // gelu_erf
  return round_to(act, a.gate_round) * u;
}


// Rows decoded together: each (row, input) dot product keeps its own fp32 accumulator summed in column order, and
// kRowBlock of them side by side run as independent vector lanes (the same operations, in the same order, as one
// row at a time, so the same bits). Each product is rounded to fp32 before it is added, never fused into a
// multiply-add, on every compiler and machine: that is the kernel's arithmetic (fp32 products, fp32 sums in order).
constexpr int kRowBlock = 32;

template <bool kBf16Acc>
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
void block_dots(const float* wt, std::int64_t cols, const float* a, float* res) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  float s[kRowBlock] = {};
  for (std::int64_t c = 0; c < cols; ++c) {
    const float x = a[c];
    const float* w = wt + c * kRowBlock;
    for (int rr = 0; rr < kRowBlock; ++rr) {
      if constexpr (kBf16Acc) s[rr] = round_to_bf16(s[rr] + x * w[rr]);
      else s[rr] = s[rr] + x * w[rr];
    }
  }
  std::copy(s, s + kRowBlock, res);
}

// out[i * m.rows + r] = row r of the matrix . in[i * m.cols ...] (+ bias) for every input i < n: each weight row is
// decoded once for all the inputs routed to this expert (the work a grouped kernel shares), then one accumulator per
// (row, input) sums its products in column order.
void matvec(const MatrixView& m, const float* bias, const std::vector<float>& in, std::int64_t n, std::vector<float>& out,
            const HostKernelHooks& hooks) {
  const bool bf16_acc = hooks.accumulate_in_bf16();
  std::vector<float> wt(static_cast<std::size_t>(m.cols * kRowBlock), 0.0f);  // [cols][kRowBlock]
  out.assign(static_cast<std::size_t>(n * m.rows), 0.0f);
  float res[kRowBlock];
  for (std::int64_t r0 = 0; r0 < m.rows; r0 += kRowBlock) {
    const int nr = int(std::min<std::int64_t>(kRowBlock, m.rows - r0));
    for (int rr = 0; rr < nr; ++rr) decode_row(m, r0 + rr, wt.data() + rr, kRowBlock, hooks);
    for (std::int64_t i = 0; i < n; ++i) {
      const float* a = in.data() + i * m.cols;
      bf16_acc ? block_dots<true>(wt.data(), m.cols, a, res) : block_dots<false>(wt.data(), m.cols, a, res);
      for (int rr = 0; rr < nr; ++rr) out[i * m.rows + r0 + rr] = bias ? res[rr] + bias[r0 + rr] : res[rr];
    }
  }
}

// One expert applied to n input rows (each already in fp32): y = W2 * act(W13 * a + b13) + b2, row by row of a.
std::vector<float> expert_forward(const ProblemSpec& p, const ExpertWeights& w, const QuantScheme& q, std::int64_t e,
                                  std::int64_t inter, std::vector<float> a, std::int64_t n, bool shared,
                                  const HostKernelHooks& hooks) {
  const std::int64_t h = p.hidden;
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<float> v(a.begin() + i * h, a.begin() + (i + 1) * h);
    quantize_activation_row(v, q, shared ? 0.0f : hooks.forced_token_scale());
    std::copy(v.begin(), v.end(), a.begin() + i * h);
  }
  const float* b13 = !w.w13_bias.empty() ? w.w13_bias.span<float>().data() + e * 2 * inter : nullptr;
  const float* b2 = !w.w2_bias.empty() ? w.w2_bias.span<float>().data() + e * h : nullptr;
  std::vector<float> hv, y;
  matvec({&w, &q, true, e, 2 * inter, h, inter}, b13, a, n, hv, hooks);
  for (float& v : hv) v = round_to(v, p.gate_up_dtype);  // h as the activation reads it
  GateParams ap{p.activation, p.layout, p.swiglu_alpha, p.swiglu_limit, !shared || p.clamp_shared, p.act_gate_dtype};
  hooks.activation(ap, shared, e);
  std::vector<float> z(static_cast<std::size_t>(n * inter));
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<float> zi(static_cast<std::size_t>(inter));
    const float* hi = hv.data() + i * 2 * inter;
    for (std::int64_t j = 0; j < inter; ++j) {
      const float g = gated(hi, inter, j, ap);
      zi[j] = hooks.intermediate_rounded(g, p.intermediate, round_to(g, p.intermediate));
    }
    if (hooks.quantize_intermediate()) quantize_activation_row(zi, q);
    std::copy(zi.begin(), zi.end(), z.begin() + i * inter);
  }
  matvec({&w, &q, false, e, h, inter, inter}, b2, z, n, y, hooks);
  return y;
}

// One expert's share of a run: the (token, slot) rows it computes, and their outputs [rows.size(), H].
struct ExpertWork {
  const ExpertWeights* w;
  const QuantScheme* q;
  std::int64_t expert, inter;
  bool shared;
  std::vector<std::int64_t> rows;  // indices into the run's slot list
  std::vector<float> y;
};

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

RunInfo HostContractKernel::run(const ProblemSpec& given, const Checkpoint& c, const RoutingResult& routing, Tensor& out) {
  const auto start = std::chrono::steady_clock::now();
  const ProblemSpec p = with_contract(given, rounding_.rounds);
  const std::int64_t t = p.tokens, h = p.hidden, k = routing.k;
  const std::int64_t first = p.first_local_expert(), local = p.local_experts();
  HostKernelHooks& hooks = *hooks_;
  hooks.begin_run(p, c, routing);
  auto x_at = [&](std::int64_t i) {
    const std::uint16_t b = c.x.span<std::uint16_t>()[i];
    return p.input_dtype == DType::bf16 ? bf16_to_f32(b) : fp16_to_f32(b);
  };
  // Each token's slots (its top-k choices in order, then the shared experts): which expert, which weight, whether
  // it counts. The expert work is then done expert by expert (every row of an expert's weights decoded once for all
  // its tokens), and each token's output summed from its slots in slot order: the sums of one CPU thread per token,
  // whatever the reduce mode (per_k and separate keep every (token, k) result before reducing, fused_atomic
  // accumulates as it goes: on the host the three give the same sums in the same order, which is the contract).
  struct Slot {
    std::int64_t tok;
    float weight;
    bool counted;
    std::int64_t work = -1, row = -1;  // its output: works[work].y row `row`
  };
  const std::int64_t ns = p.ep_rank == 0 ? p.n_shared : 0;
  const std::int64_t per = k + ns;
  std::vector<Slot> slots(static_cast<std::size_t>(t * per), Slot{0, 0.0f, false});
  std::vector<ExpertWork> works;
  std::vector<std::int64_t> work_of(static_cast<std::size_t>(local), -1);
  auto add_row = [&](std::int64_t wk, std::int64_t slot) {
    slots[slot].work = wk;
    slots[slot].row = std::int64_t(works[wk].rows.size());
    works[wk].rows.push_back(slot);
  };
  for (std::int64_t tok = 0; tok < t; ++tok) {
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t e = routing.ids[tok * k + j] - first;
      if (e < 0 || e >= local) continue;
      const float wgt = routing.weights[tok * k + j];
      const bool counted = hooks.slot_summed(tok, j);
      const std::int64_t slot = tok * per + j;
      slots[slot] = Slot{tok, wgt, counted};
      if (!counted) continue;
      if (work_of[e] < 0) {
        work_of[e] = std::int64_t(works.size());
        works.push_back({&c.routed, &p.quant, e, p.local_inter(), false, {}, {}});
      }
      add_row(work_of[e], slot);
    }
  }
  for (std::int64_t s = 0; s < ns; ++s) {
    works.push_back({&c.shared, &p.shared_quant, s, p.local_shared_inter(), true, {}, {}});
    for (std::int64_t tok = 0; tok < t; ++tok) {
      slots[tok * per + k + s] = Slot{tok, 1.0f, true};
      add_row(std::int64_t(works.size()) - 1, tok * per + k + s);
    }
  }
  const bool on_input = p.router_weight_on == RouterWeightOn::input;
  // weight=finalize: the slot is rounded unweighted and the router weight multiplies it in the sum below.
  const bool finalize = p.router_weight_at == RouterWeightAt::finalize && !on_input;
  const IntermediateDtype in_dt = p.input_dtype == DType::bf16 ? IntermediateDtype::bf16 : IntermediateDtype::f16;
  std::vector<std::size_t> order(works.size());  // the largest first: better balance under dynamic scheduling
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return works[a].rows.size() > works[b].rows.size(); });
  OmpErrors errors;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t wi = 0; wi < works.size(); ++wi) errors.run([&] {
    ExpertWork& wk = works[order[wi]];
    const std::int64_t n = std::int64_t(wk.rows.size());
    std::vector<float> a(static_cast<std::size_t>(n * h));
    for (std::int64_t i = 0; i < n; ++i) {
      const Slot& sl = slots[wk.rows[i]];
      for (std::int64_t col = 0; col < h; ++col) {
        const float x = x_at(sl.tok * h + col);
        a[i * h + col] = on_input && !wk.shared ? round_to(x * sl.weight, in_dt) : x;
      }
    }
    wk.y = expert_forward(p, *wk.w, *wk.q, wk.expert, wk.inter, std::move(a), n, wk.shared, hooks);
    if (!on_input && !wk.shared && !finalize)
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t col = 0; col < h; ++col) wk.y[i * h + col] *= slots[wk.rows[i]].weight;
    const IntermediateDtype slot_dt = wk.shared ? p.slot_dtype : hooks.expert_slot_dtype(wk.expert, p.slot_dtype);
    for (float& v : wk.y) v = round_to(v, slot_dt);  // each slot's output as the sum reads it
  });
  errors.rethrow();
  // A separate shared path: the shared experts' own output and the routed output summed as the model does
  // (kernels/common/output_sums.hpp).
  const bool separate = p.shared_path == SharedPath::separate;
#pragma omp parallel for schedule(static)
  for (std::int64_t tok = 0; tok < t; ++tok) errors.run([&] {
    std::vector<float> acc(static_cast<std::size_t>(h), 0.0f), shared(static_cast<std::size_t>(h), 0.0f);
    const IntermediateDtype reduce_dt = hooks.token_reduce_dtype(tok, p.reduce_dtype);
    for (std::int64_t j = 0; j < per; ++j) {
      const Slot& sl = slots[tok * per + j];
      if (!sl.counted || sl.work < 0) continue;
      const float* y = works[sl.work].y.data() + sl.row * h;
      float* dst = j >= k && separate ? shared.data() : acc.data();
      const float w = finalize && j < k ? sl.weight : 1.0f;
      for (std::int64_t col = 0; col < h; ++col) dst[col] = round_to(dst[col] + w * y[col], reduce_dt);
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
