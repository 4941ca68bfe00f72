#include "reference/naive/naive_moe.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include "formats/bf16.hpp"
#include "formats/e8m0.hpp"
#include "formats/fp16.hpp"
#include "formats/fp8.hpp"
#include "formats/minifloat.hpp"
#include "formats/weight_format.hpp"

namespace moe::naive {
namespace {

float sigmoidf(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// Repeated arg-max: the first (lowest index) maximum wins, and chosen entries are skipped.
std::vector<int> pick(const std::vector<float>& v, int k) {
  std::vector<int> out;
  std::vector<bool> used(v.size(), false);
  for (int j = 0; j < k; ++j) {
    int best = -1;
    for (int i = 0; i < int(v.size()); ++i)
      if (!used[i] && (best < 0 || v[i] > v[best])) best = i;
    used[best] = true;
    out.push_back(best);
  }
  return out;
}

}  // namespace

NaiveRouting route(const ProblemSpec& s, const Checkpoint& c) {
  NaiveRouting r;
  const int e = int(s.experts), k = s.topk;
  for (std::int64_t t = 0; t < s.tokens; ++t) {
    std::vector<float> l(c.router_logits.span<float>().begin() + t * e, c.router_logits.span<float>().begin() + (t + 1) * e);
    std::vector<int> ids;
    std::vector<double> w;
    switch (s.routing.kind) {
      case RoutingKind::softmax_topk: {
        float m = l[0];
        for (float v : l) m = std::max(m, v);
        std::vector<float> p(e);
        float sum = 0.0f;
        for (int i = 0; i < e; ++i) { p[i] = std::exp(l[i] - m); sum += p[i]; }
        for (int i = 0; i < e; ++i) p[i] /= sum;
        ids = pick(p, k);
        float sel = 0.0f;
        for (int id : ids) sel += p[id];
        for (int id : ids) w.push_back(s.routing.renormalize ? double(p[id] / sel) : double(p[id]));
        break;
      }
      case RoutingKind::grouped_sigmoid: {
        const int ng = s.routing.n_group, per = e / ng;
        std::vector<float> sc(e), corr(e);
        for (int i = 0; i < e; ++i) { sc[i] = sigmoidf(l[i]); corr[i] = sc[i] + c.score_bias.span<float>()[i]; }
        std::vector<float> gs(ng);
        for (int g = 0; g < ng; ++g) {
          std::vector<float> part(corr.begin() + g * per, corr.begin() + (g + 1) * per);
          auto two = pick(part, 2);
          gs[g] = part[two[0]] + part[two[1]];
        }
        auto keep = pick(gs, s.routing.topk_group);
        std::vector<float> masked(e, -INFINITY);
        for (int g : keep)
          for (int i = g * per; i < (g + 1) * per; ++i) masked[i] = corr[i];
        ids = pick(masked, k);
        float sum = 0.0f;
        for (int id : ids) sum += sc[id];
        for (int id : ids) {
          float v = sc[id];
          if (s.routing.renormalize) v = v / (sum + 1e-20f);
          w.push_back(double(v * s.routing.routed_scaling));
        }
        break;
      }
      case RoutingKind::sigmoid_top1: {
        ids = pick(l, 1);
        w.push_back(double(sigmoidf(l[ids[0]])));
        break;
      }
      case RoutingKind::precomputed:
        for (int j = 0; j < k; ++j) {
          ids.push_back(c.topk_ids.span<std::int32_t>()[t * k + j]);
          w.push_back(double(c.topk_weights.span<float>()[t * k + j]));
        }
        break;
    }
    r.ids.insert(r.ids.end(), ids.begin(), ids.end());
    r.weights.insert(r.weights.end(), w.begin(), w.end());
  }
  return r;
}

namespace {

// Element (row, col) of expert `ex`'s weight matrix with `rows` x `cols` logical shape: the stored element's value
// times the scale of its block, the block located from the format table's block sizes by this file's own arithmetic.
double weight(const ExpertWeights& w, const QuantScheme& q, bool is13, std::int64_t ex, std::int64_t rows,
              std::int64_t cols, std::int64_t row, std::int64_t col, std::int64_t inter) {
  const WeightFormatInfo& f = weight_format_info(q.weight);
  const Tensor& el = is13 ? w.w13 : w.w2;
  const Tensor& sc = is13 ? w.w13_scale : w.w2_scale;
  const std::int64_t flat = (ex * rows + row) * cols + col;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(el.bytes());
  double v;
  if (el.dtype() == DType::bf16) {
    v = bf16_to_f32(el.span<std::uint16_t>()[flat]);
  } else if (el.dtype() == DType::f16) {
    v = fp16_to_f32(el.span<std::uint16_t>()[flat]);
  } else if (f.element_bits == 4) {  // two codes a byte, the even element in the low nibble
    const std::uint8_t byte = bytes[flat / 2];
    v = minifloat_decode(*minifloat_spec_of(el.dtype()), col % 2 == 0 ? (byte & 0x0F) : (byte >> 4));
  } else {
    v = minifloat_decode(*minifloat_spec_of(el.dtype()), bytes[flat]);
  }
  if (f.scale == ScaleKind::none) return v;
  // Scale blocks: block_rows x block_k (0: the whole dimension); w13's gate and up halves are blocked apart.
  std::int64_t block_row = 0, block_rows = 1;
  if (f.block_rows > 0) {
    const std::int64_t br = f.block_rows;
    if (is13) {
      const std::int64_t per_half = (inter + br - 1) / br;
      block_row = row < inter ? row / br : per_half + (row - inter) / br;
      block_rows = 2 * per_half;
    } else {
      block_row = row / br;
      block_rows = (rows + br - 1) / br;
    }
  }
  const std::int64_t bk = f.block_k > 0 ? f.block_k : cols, block_cols = (cols + bk - 1) / bk;
  const std::int64_t at = (ex * block_rows + block_row) * block_cols + col / bk;
  const double scale = f.scale == ScaleKind::f32 ? double(sc.span<float>()[at])
                                                 : double(e8m0_decode(sc.span<std::uint8_t>()[at], q.e8m0_edges));
  return v * scale;
}

double round_dtype(double v, IntermediateDtype d) {
  switch (d) {
    case IntermediateDtype::bf16: return bf16_to_f32(bf16_from_f32(float(v)));
    case IntermediateDtype::f16: return fp16_to_f32(fp16_from_f32(float(v)));
    default: return double(float(v));
  }
}
// The contract's gate_up, slot and reduce points: f32 there is not rounded.
double round_point(double v, IntermediateDtype d) { return d == IntermediateDtype::f32 ? v : round_dtype(v, d); }
IntermediateDtype as_intermediate(DType d) {
  return d == DType::bf16 ? IntermediateDtype::bf16 : d == DType::f16 ? IntermediateDtype::f16 : IntermediateDtype::f32;
}

// Shared exponent of an MX block, computed with log2 in double (a different route from formats/fp8_quant and mx_quant).
int mx_exponent(float amax, MxScaleMode mode) {
  if (!(amax > 0.0f)) return -127;
  int x = 0;
  if (mode == MxScaleMode::floor) x = int(std::floor(std::log2(double(amax)))) - 8;
  else if (mode == MxScaleMode::rceil) x = int(std::ceil(std::log2(double(amax / 448.0f))));
  else {
    std::uint32_t b = std::bit_cast<std::uint32_t>(amax);
    b = (b + (1u << 19)) & 0xFF800000u;  // e4m3: 3 mantissa bits -> add 1 << (22 - 3)
    x = int(std::floor(std::log2(double(std::bit_cast<float>(b))))) - 8;
  }
  return std::min(127, std::max(-127, x));
}

// Activation quantization of one row in place, as the contract declares it.
void quantize_row(std::vector<double>& v, const QuantScheme& q) {
  const std::int64_t k = std::int64_t(v.size());
  if (q.act == ActFormat::none) return;
  if (q.act == ActFormat::mxfp8) {
    for (std::int64_t b = 0; b < k; b += 32) {
      float amax = 0.0f;
      for (std::int64_t i = b; i < b + 32; ++i) amax = std::max(amax, std::fabs(float(v[i])));
      const int x = mx_exponent(amax, q.mx_mode);
      for (std::int64_t i = b; i < b + 32; ++i) {
        const float scaled = float(double(float(v[i])) / std::ldexp(1.0, x));
        v[i] = minifloat_decode(kE4M3Fn, minifloat_encode(kE4M3Fn, scaled)) * std::ldexp(1.0, x);
      }
    }
    return;
  }
  const MinifloatSpec& spec = e4m3_spec(q.flavor);
  const float qmax = q.act_qmax > 0 ? q.act_qmax : float(spec.max_finite());
  const std::int64_t group = q.act == ActFormat::fp8_token ? k : 128;
  for (std::int64_t g0 = 0; g0 < k; g0 += group) {
    const std::int64_t g1 = std::min(k, g0 + group);
    float amax = 0.0f;
    for (std::int64_t i = g0; i < g1; ++i) amax = std::max(amax, std::fabs(float(v[i])));
    // The contract points token/group_scale_form and token/group_scale: each reciprocal rounded to fp32 before it
    // multiplies.
    const float floored = std::max(amax, q.act_amax_floor);
    const float inv_qmax = 1.0f / qmax;
    float scale = q.act_scale_form == ActScaleForm::qmax_reciprocal ? floored * inv_qmax : floored / qmax;
    if (q.act_scale_pow2) scale = float(std::exp2(std::ceil(std::log2(double(scale)))));
    const float inv_scale = 1.0f / scale;
    for (std::int64_t i = g0; i < g1; ++i) {
      float y = q.act_scale_op == ActScaleOp::reciprocal ? float(v[i]) * inv_scale : float(v[i]) / scale;
      y = std::min(qmax, std::max(-qmax, y));
      v[i] = double(minifloat_decode(spec, minifloat_encode(spec, y))) * double(scale);
    }
  }
}

// act(g), the activation's gate part (SwiGLU-OAI: g sigmoid(alpha g), g clamped), rounded at the act_gate point.
double gate_act(double g, const ProblemSpec& s, bool shared, bool contract) {
  double a = 0.0;
  switch (s.activation) {
    case Activation::silu: a = g / (1.0 + std::exp(-g)); break;
    case Activation::gelu_tanh: a = 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g))); break;
    case Activation::gelu_erf: a = 0.5 * g * (1.0 + std::erf(g / std::sqrt(2.0))); break;
    case Activation::swiglu_oai:
      if ((!shared || s.clamp_shared) && g > s.swiglu_limit) g = s.swiglu_limit;
      a = g / (1.0 + std::exp(-double(s.swiglu_alpha) * g));
      break;
  }
  return contract ? round_point(a, s.act_gate_dtype) : a;
}

double act(double g, double u, const ProblemSpec& s, bool shared, bool contract) {
  if (s.activation != Activation::swiglu_oai) return gate_act(g, s, shared, contract) * u;
  const bool clamp = !shared || s.clamp_shared;
  if (clamp) u = std::min(std::max(u, -double(s.swiglu_limit)), double(s.swiglu_limit));
  if (contract && s.act_gate_dtype != IntermediateDtype::f32) return (u + 1.0) * gate_act(g, s, shared, contract);
  if (clamp && g > s.swiglu_limit) g = s.swiglu_limit;
  return (u + 1.0) * g / (1.0 + std::exp(-double(s.swiglu_alpha) * g));  // one rounding: the product before the division
}

// One expert on one input row: returns its H outputs (bias included, no router weight).
std::vector<double> expert(const ProblemSpec& s, const ExpertWeights& w, const QuantScheme& q, std::int64_t ex,
                           std::int64_t inter, std::vector<double> xin, bool contract, bool shared) {
  const std::int64_t h = s.hidden;
  if (contract) quantize_row(xin, q);
  std::vector<double> hh(2 * inter, 0.0);
  for (std::int64_t r = 0; r < 2 * inter; ++r) {
    double acc = 0.0;
    for (std::int64_t c = 0; c < h; ++c) acc += xin[c] * weight(w, q, true, ex, 2 * inter, h, r, c, inter);
    if (!w.w13_bias.empty()) acc += w.w13_bias.span<float>()[ex * 2 * inter + r];
    hh[r] = contract ? round_point(acc, s.gate_up_dtype) : acc;
  }
  std::vector<double> z(inter);
  for (std::int64_t i = 0; i < inter; ++i) {
    double g, u;
    if (s.layout == GateUpLayout::gate_up) { g = hh[i]; u = hh[inter + i]; }
    else if (s.layout == GateUpLayout::up_gate) { u = hh[i]; g = hh[inter + i]; }
    else { g = hh[2 * i]; u = hh[2 * i + 1]; }
    z[i] = act(g, u, s, shared, contract);
    if (contract) z[i] = round_dtype(z[i], s.intermediate);
  }
  if (contract) quantize_row(z, q);
  std::vector<double> y(h);
  for (std::int64_t r = 0; r < h; ++r) {
    double acc = 0.0;
    for (std::int64_t i = 0; i < inter; ++i) acc += z[i] * weight(w, q, false, ex, h, inter, r, i, inter);
    if (!w.w2_bias.empty()) acc += w.w2_bias.span<float>()[ex * h + r];
    y[r] = acc;
  }
  return y;
}

// One slot into its sum: the slot's output rounded to the slot dtype, then added, the sum rounded to the reduce dtype.
void add_slot(std::vector<double>& sum, const std::vector<double>& y, const ProblemSpec& s, bool contract) {
  for (std::size_t col = 0; col < sum.size(); ++col) {
    const double v = contract ? round_point(y[col], s.slot_dtype) : y[col];
    sum[col] = contract ? round_point(sum[col] + v, s.reduce_dtype) : sum[col] + v;
  }
}

}  // namespace

std::vector<double> moe(const ProblemSpec& s, const Checkpoint& c, const NaiveRouting& r, bool contract) {
  const std::int64_t t = s.tokens, h = s.hidden, k = s.topk;
  std::vector<double> out(t * h, 0.0);
  for (std::int64_t i = 0; i < t; ++i) {
    std::vector<double> x(h);
    for (std::int64_t col = 0; col < h; ++col) {
      const std::uint16_t b = c.x.span<std::uint16_t>()[i * h + col];
      x[col] = s.input_dtype == DType::bf16 ? bf16_to_f32(b) : fp16_to_f32(b);
    }
    std::vector<double> acc(h, 0.0);
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t id = r.ids[i * k + j] - s.first_local_expert();
      if (id < 0 || id >= s.local_experts()) continue;
      const double wgt = r.weights[i * k + j];
      std::vector<double> y;
      if (s.router_weight_on == RouterWeightOn::input) {
        std::vector<double> xs(h);
        for (std::int64_t col = 0; col < h; ++col) {
          xs[col] = double(float(x[col]) * float(wgt));
          if (contract) xs[col] = round_dtype(xs[col], as_intermediate(s.input_dtype));
        }
        y = expert(s, c.routed, s.quant, id, s.local_inter(), xs, contract, false);
      } else {
        y = expert(s, c.routed, s.quant, id, s.local_inter(), x, contract, false);
        for (auto& v : y) v *= wgt;
      }
      add_slot(acc, y, s, contract);
    }
    // A separate shared path: routed and shared outputs each rounded to the output dtype, their sum rounded again.
    const bool separate = contract && s.shared_path == SharedPath::separate;
    const IntermediateDtype od = as_intermediate(s.output_dtype);
    std::vector<double> shared(h, 0.0);
    if (s.ep_rank == 0)
      for (int e = 0; e < s.n_shared; ++e) {
        auto y = expert(s, c.shared, s.shared_quant, e, s.local_shared_inter(), x, contract, true);
        add_slot(separate ? shared : acc, y, s, contract);
      }
    for (std::int64_t col = 0; col < h; ++col) {
      if (separate) out[i * h + col] = round_dtype(round_dtype(acc[col], od) + round_dtype(shared[col], od), od);
      else out[i * h + col] = contract ? round_dtype(acc[col], od) : acc[col];
    }
  }
  return out;
}

}  // namespace moe::naive
