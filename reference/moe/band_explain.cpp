#include "reference/moe/band_explain.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "formats/bf16.hpp"
#include "formats/fp16.hpp"
#include "formats/mx_quant.hpp"
#include "reference/moe/act_quant.hpp"
#include "reference/moe/band_fit.hpp"
#include "reference/moe/activation.hpp"
#include "reference/moe/ensemble.hpp"
#include "reference/moe/expert_gemm.hpp"

namespace moe {
using namespace engine;

namespace {

// The spacing of d's values at |x| (0 at 0).
double ulp_at(double x, IntermediateDtype d) {
  if (x == 0 || !std::isfinite(x)) return 0;
  int e = 0;
  std::frexp(x, &e);  // |x| in [2^(e-1), 2^e)
  switch (d) {
    case IntermediateDtype::bf16: return std::ldexp(1.0, std::max(e - 1, -126) - 7);
    case IntermediateDtype::f16: return std::ldexp(1.0, std::max(e - 1, -14) - 10);
    case IntermediateDtype::f32: return std::ldexp(1.0, std::max(e - 1, -126) - 23);
  }
  return 0;
}
IntermediateDtype as_intermediate(DType d) {
  return d == DType::bf16 ? IntermediateDtype::bf16 : d == DType::f16 ? IntermediateDtype::f16 : IntermediateDtype::f32;
}
// The next value of d above (up) or below positive v (an f32 intermediate: v moved by 2^-12 relative).
float step_value(float v, IntermediateDtype d, bool up) {
  switch (d) {
    case IntermediateDtype::bf16: return bf16_to_f32(std::uint16_t(bf16_from_f32(v) + (up ? 1 : -1)));
    case IntermediateDtype::f16: return fp16_to_f32(std::uint16_t(fp16_from_f32(v) + (up ? 1 : -1)));
    case IntermediateDtype::f32: return v * (up ? 1.0f + 0x1p-12f : 1.0f - 0x1p-12f);
  }
  return v;
}
std::int64_t group_width(ActFormat f, std::int64_t inter) {
  return f == ActFormat::fp8_group128 ? 128 : f == ActFormat::mxfp8 ? kMxBlock : inter;
}

struct Builder {
  const ProblemSpec& s;
  std::vector<Eigen::VectorXd> cols;
  std::vector<BandColumn> meta;
  Eigen::VectorXd var;
  int groups = 0;
  // The band's columns by default; steps_only: the scale scenarios alone, the nearest `scale_steps` each way, reached
  // by the accumulation error alone (no extra rounding of the intermediate: a kernel that declares its roundings
  // makes them where the contract does).
  bool steps_only = false;
  int scale_steps = kExplainScaleSteps;
  void add(Eigen::VectorXd v, BandColumn c) {
    if (!(v.squaredNorm() > 0) || !v.allFinite()) return;
    cols.push_back(std::move(v));
    meta.push_back(std::move(c));
  }
};

// One slot of the token: x its input row [H], w the router weight its output carries (1 on the input side).
void slot_columns(Builder& b, const ExpertJob& job, const std::vector<float>& x, float weight, const std::string& name) {
  const ProblemSpec& s = b.s;
  const QuantScheme& q = *job.quant;
  const std::int64_t h = s.hidden, inter = job.inter;
  const bool on_input = s.router_weight_on == RouterWeightOn::input && !job.shared;
  const double w = on_input ? 1.0 : weight;
  const int bits = gemm_accum_bits(s, q);
  const double beta = bits < 24 ? kTruncationBias : 0.0;
  // Stage 1 as the contract computes it (ensemble.cpp run_expert_members, one row).
  std::vector<float> a(x);
  if (on_input) {
    for (auto& v : a) v *= weight;
    round_to_dtype(a.data(), h, s.input_dtype);
  }
  fake_quantize_activation_rows(a.data(), 1, h, q);
  std::vector<float> h1(static_cast<std::size_t>(2 * inter)), sq13(static_cast<std::size_t>(2 * inter));
  LargeVector<float> wbuf;
  MapMat<float> am(a.data(), 1, h), h1m(h1.data(), 1, 2 * inter);
  gemm_with_dequant(job, WeightMatrix::w13, h, am, h1m, wbuf, sq13.data());
  const double a_norm = am.row(0).cast<double>().norm();
  const float* b13 = job.weights->w13_bias.empty() ? nullptr : job.weights->w13_bias.span<float>().data() + job.index * 2 * inter;
  const ActivationParams ap{s.activation, s.layout, s.swiglu_alpha, s.swiglu_limit, !job.shared || s.clamp_shared, s.act_gate_dtype};
  auto gu = [&](float v) { round_point(&v, 1, s.gate_up_dtype); return v; };
  std::vector<float> z(static_cast<std::size_t>(inter)), lo(z), hi(z);
  for (std::int64_t i = 0; i < inter; ++i) {
    const std::int64_t gi = s.layout == GateUpLayout::gate_up ? i : s.layout == GateUpLayout::up_gate ? inter + i : 2 * i;
    const std::int64_t ui = s.layout == GateUpLayout::gate_up ? inter + i : s.layout == GateUpLayout::up_gate ? i : 2 * i + 1;
    const float g = h1[gi] + (b13 ? b13[gi] : 0.0f), u = h1[ui] + (b13 ? b13[ui] : 0.0f);
    const float dg = float((kExplainSigmas + beta) * std::ldexp(a_norm * std::sqrt(double(sq13[gi])), -bits));
    const float du = float((kExplainSigmas + beta) * std::ldexp(a_norm * std::sqrt(double(sq13[ui])), -bits));
    z[i] = gate_value(gu(g), gu(u), ap);
    lo[i] = hi[i] = z[i];
    for (float sg : {-1.0f, 1.0f})
      for (float su : {-1.0f, 1.0f}) {
        const float v = gate_value(gu(g + sg * dg), gu(u + su * du), ap);
        lo[i] = std::min(lo[i], v), hi[i] = std::max(hi[i], v);
      }
    const float act = float(std::fabs(z[i]) * kActivationNoise * 1.7320508);  // the envelope's act draw at its edge, sqrt(3)
    const float r = s.intermediate == IntermediateDtype::f32 || b.steps_only
                        ? 0.0f : float(kExplainRoundingUlps * ulp_at(z[i], s.intermediate));
    lo[i] -= act + r, hi[i] += act + r;
  }
  // The reference's intermediate: rounded, requantized.
  std::vector<float> zr(z);
  round_point(zr.data(), inter, s.intermediate);
  std::vector<float> zq(zr);
  fake_quantize_activation_rows(zq.data(), 1, inter, q);
  round_point(lo.data(), inter, s.intermediate);
  round_point(hi.data(), inter, s.intermediate);
  if (b.steps_only && q.act == ActFormat::none) return;  // no requantization: no step
  // W2 [H, I], dequantized; GEMM2's noise and the slot's rounding.
  std::vector<float> w2buf(static_cast<std::size_t>(h * inter));
  dequantize_rows(*job.weights, q, WeightMatrix::w2, job.index, h, inter, 0, h, w2buf.data());
  const MapMat<float> w2f(w2buf.data(), h, inter);
  auto w2 = w2f.cast<double>();  // read a column or a block at a time
  const Eigen::VectorXd zqv = Eigen::Map<const Eigen::VectorXf>(zq.data(), inter).cast<double>();
  if (!b.steps_only) {  // the band's noise (the steps need none)
    const Eigen::VectorXd y = w * (w2 * zqv);
    for (std::int64_t c = 0; c < h; ++c) {
      const double sigma = std::ldexp(zqv.norm() * w2.row(c).norm(), -bits) * std::fabs(w);
      b.var[c] += (1 + beta * beta) * sigma * sigma;
      if (s.slot_dtype != IntermediateDtype::f32) b.var[c] += std::pow(ulp_at(y[c], s.slot_dtype), 2) / 6;
    }
  }
  if (q.act == ActFormat::none && s.intermediate == IntermediateDtype::f32) {
    // Nothing rounds the intermediate: its accumulation error reaches the output continuously, as noise.
    for (std::int64_t i = 0; i < inter; ++i) {
      const double sz = (hi[i] - lo[i]) / (2 * (kExplainSigmas + beta));
      b.var += (w * sz) * (w * sz) * w2.col(i).cwiseAbs2();
    }
    return;
  }
  const std::int64_t gw = group_width(q.act, inter);
  for (std::int64_t g0 = 0; g0 < inter; g0 += gw) {
    const std::int64_t n = std::min(gw, inter - g0);
    double amax = 0;
    std::int64_t arg = g0;
    for (std::int64_t i = g0; i < g0 + n; ++i)
      if (std::fabs(zr[i]) > amax) amax = std::fabs(zr[i]), arg = i;
    const bool scaled = q.act != ActFormat::none;
    if (!b.steps_only) {
      // Flips under the group's own scale: each element's two reachable values, requantized in a copy of its group
      // (another element is clamped to the amax: exceeding it is a scale scenario below, not a flip).
      const std::int64_t chunk = std::max<std::int64_t>(1, (std::int64_t(1) << 21) / (2 * n));
      std::vector<float> probe;
      for (std::int64_t i0 = 0; i0 < n; i0 += chunk) {
        const std::int64_t i1 = std::min(n, i0 + chunk);
        probe.resize(std::size_t(2 * (i1 - i0) * n));
        for (std::int64_t i = i0; i < i1; ++i)
          for (int side = 0; side < 2; ++side) {
            float* row = probe.data() + (2 * (i - i0) + side) * n;
            std::copy_n(zr.data() + g0, n, row);
            const float v = side ? hi[g0 + i] : lo[g0 + i];
            row[i] = scaled && g0 + i != arg ? std::clamp(v, float(-amax), float(amax)) : v;
          }
        fake_quantize_activation_rows(probe.data(), 2 * (i1 - i0), n, q);
        for (std::int64_t i = i0; i < i1; ++i) {
          double step = 0;
          for (int side = 0; side < 2; ++side) {
            const float* row = probe.data() + (2 * (i - i0) + side) * n;
            // The amax element moves its group's amax: a flip only where the scale stays (a power-of-two scale; an
            // exact one follows the amax, and that is a scale scenario below).
            bool scale_moved = false;
            for (std::int64_t o = 0; o < n && g0 + i == arg; ++o) scale_moved |= o != i && row[o] != zq[g0 + o];
            const double d = double(row[i]) - zq[g0 + i];
            if (!scale_moved && std::fabs(d) > std::fabs(step)) step = d;
          }
          if (step != 0)
            b.add(w * step * w2.col(g0 + i), {fmt::format("{} element {}: step {:.4g}", name, g0 + i, step)});
        }
      }
    }
    if (!scaled || amax == 0) continue;
    // The scale: every amax the group's elements can reach, one column each.
    double reach_hi = 0, reach_lo = 0;
    for (std::int64_t i = g0; i < g0 + n; ++i) {
      reach_hi = std::max(reach_hi, double(std::max(std::fabs(lo[i]), std::fabs(hi[i]))));
      reach_lo = std::max(reach_lo, lo[i] <= 0 && hi[i] >= 0 ? 0.0 : double(std::min(std::fabs(lo[i]), std::fabs(hi[i]))));
    }
    const int group = b.groups++;
    bool moved = false;
    // Walking each way through the reachable amaxes, one column per distinct requantization (a power-of-two scale
    // changes only where the amax crosses a power of two; an exact one at every step), the nearest
    // kExplainScaleSteps each way.
    for (bool up : {true, false}) {
      float v = float(amax);
      std::vector<float> last(zq.begin() + g0, zq.begin() + g0 + n);
      for (int k = 0, found = 0; k < kExplainScaleWalk && found < b.scale_steps; ++k) {
        v = step_value(v, s.intermediate, up);
        if (up ? v > reach_hi : v < reach_lo) break;
        std::vector<float> row(zr.begin() + g0, zr.begin() + g0 + n);
        row[arg - g0] = std::copysign(v, zr[arg]);
        fake_quantize_activation_rows(row.data(), 1, n, q);
        Eigen::VectorXd d(n);
        std::int64_t changed = 0, differs = 0;
        for (std::int64_t i = 0; i < n; ++i) {
          d[i] = double(row[i]) - zq[g0 + i];
          changed += d[i] != 0 && g0 + i != arg;
          differs += row[i] != last[std::size_t(i)] && g0 + i != arg;
        }
        if (changed == 0 || differs == 0) continue;  // the scale did not move, or moved to one already taken
        last = row;
        moved = true;
        ++found;
        b.add(w * (w2.middleCols(g0, n) * d),
              {fmt::format("{} group {}: amax {:.6g} -> {:.6g} ({} codes)", name, g0 / gw, amax, v, changed),
               kExplainMaxSteps, group});
      }
    }
    if (moved && !b.steps_only) {
      const double rel = ulp_at(amax, s.intermediate) / amax;
      b.add(w * (w2.middleCols(g0, n) * zqv.segment(g0, n)),
            {fmt::format("{} group {}: scale x(1 + c)", name, g0 / gw), kExplainMaxSteps * rel});
    }
  }
}

}  // namespace

namespace {
// Each slot of the token (slot: -1 all of them, [0, k) one routed slot, k + e the shared expert e) through
// slot_columns; returns the number of slots.
std::int64_t token_slots(Builder& b, const Checkpoint& c, const RoutingResult& routing, std::int64_t token,
                         std::int64_t slot) {
  const ProblemSpec& s = b.s;
  const std::int64_t h = s.hidden, k = routing.k;
  std::vector<float> x(static_cast<std::size_t>(h));
  const auto bits = c.x.span<std::uint16_t>();
  for (std::int64_t col = 0; col < h; ++col) {
    const std::uint16_t v = bits[token * h + col];
    x[col] = s.input_dtype == DType::bf16 ? bf16_to_f32(v) : fp16_to_f32(v);
  }
  const std::int64_t el = s.local_experts(), first = s.first_local_expert();
  std::int64_t slots = 0;
  for (std::int64_t j = 0; j < k; ++j) {
    const std::int64_t g = routing.ids[token * k + j];
    const float w = routing.weights[token * k + j];
    if (g < first || g >= first + el || w == 0 || (slot >= 0 && slot != j)) continue;
    ++slots;
    const ExpertJob job{&c.routed, &s.quant, g - first, s.local_inter(), false, {}};
    slot_columns(b, job, x, w, fmt::format("slot {} (expert {})", j, g));
  }
  if (s.ep_rank == 0)
    for (std::int64_t ex = 0; ex < s.n_shared; ++ex) {
      if (slot >= 0 && slot != k + ex) continue;
      ++slots;
      const ExpertJob job{&c.shared, &s.shared_quant, ex, s.local_shared_inter(), true, {}};
      slot_columns(b, job, x, 1.0f, fmt::format("shared {}", ex));
    }
  return slots;
}
}  // namespace

std::vector<std::vector<double>> slot_scale_steps(const ProblemSpec& s, const Checkpoint& c,
                                                  const RoutingResult& routing, std::int64_t token, std::int64_t slot) {
  Builder b{s, {}, {}, Eigen::VectorXd::Zero(s.hidden)};
  b.steps_only = true;
  b.scale_steps = kStepExplainSteps;
  token_slots(b, c, routing, token, slot);
  std::vector<std::vector<double>> out;
  for (const Eigen::VectorXd& v : b.cols) out.emplace_back(v.data(), v.data() + v.size());
  return out;
}

BandColumns band_columns(const ProblemSpec& s, const Checkpoint& c, const RoutingResult& routing, std::int64_t token,
                         const float* ref_row) {
  const std::int64_t h = s.hidden;
  Builder b{s, {}, {}, Eigen::VectorXd::Zero(h)};
  const std::int64_t slots = token_slots(b, c, routing, token, -1);
  // The output's rounding on both sides, and the reduce accumulator's after each addition.
  for (std::int64_t col = 0; col < h; ++col) {
    b.var[col] += std::pow(ulp_at(ref_row[col], as_intermediate(s.output_dtype)), 2) / 6;
    if (s.reduce_dtype != IntermediateDtype::f32) b.var[col] += double(slots) * std::pow(ulp_at(ref_row[col], s.reduce_dtype), 2) / 6;
  }
  BandColumns out;
  out.b.resize(h, Eigen::Index(b.cols.size()));
  for (std::size_t j = 0; j < b.cols.size(); ++j) out.b.col(Eigen::Index(j)) = b.cols[j];
  out.col = std::move(b.meta);
  out.noise_var = std::move(b.var);
  return out;
}

BandExplanation explain_band_token(const ProblemSpec& p, const Checkpoint& ckpt, const RoutingResult& routing,
                                   std::int64_t token, const float* ref_row, const std::vector<double>& error) {
  const BandColumns cols = band_columns(p, ckpt, routing, token, ref_row);
  return fit_band_error(cols, Eigen::Map<const Eigen::VectorXd>(error.data(), Eigen::Index(error.size())));
}

}  // namespace moe
