#include "harness/judge.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fmt/format.h>

#include "fixtures/error.hpp"
#include "reference/formats/bf16.hpp"
#include "reference/formats/fp16.hpp"
#include "reference/formats/tensor_element.hpp"

namespace moe {

std::uint32_t sentinel_bits(DType d, int which) {
  switch (d) {
    case DType::bf16: return which ? 0xFFA5u : 0x7FA5u;        // NaN payloads no arithmetic produces
    case DType::f16: return which ? 0xFDA5u : 0x7DA5u;
    default: return which ? 0xFFA5A5A5u : 0x7FA5A5A5u;
  }
}

void fill_sentinel(Tensor& out, int which) {
  const std::uint32_t s = sentinel_bits(out.dtype(), which);
  if (dtype_size(out.dtype()) == 2) for (auto& v : out.span<std::uint16_t>()) v = std::uint16_t(s);
  else for (auto& v : out.span<std::uint32_t>()) v = s;
}


namespace {
std::uint32_t raw_bits(const Tensor& out, std::int64_t i) {
  return dtype_size(out.dtype()) == 2 ? out.span<std::uint16_t>()[i] : out.span<std::uint32_t>()[i];
}
std::uint32_t ref_bits_in(DType d, float v) {
  switch (d) {
    case DType::bf16: return bf16_from_f32(v);
    case DType::f16: return fp16_from_f32(v);
    default: return std::bit_cast<std::uint32_t>(v);
  }
}
}  // namespace

Judgement judge(const std::vector<float>& ref, const std::vector<float>& ideal, const Tensor& out, std::int64_t t,
                std::int64_t h, const Thresholds& th, const RoutingResult& routing) {
  Judgement j;
  const std::uint32_t sentinel = sentinel_bits(out.dtype(), 0), sentinel2 = sentinel_bits(out.dtype(), 1);
  for (std::int64_t i = 0; i < t * h; ++i)
    if (!std::isfinite(ref[i]))
      throw_harness_error("reference", fmt::format("non-finite reference value {} at token {}, column {}", ref[i], i / h, i % h),
                          "the fixture or the reference is broken; this is never a kernel verdict");
  j.token_cos.resize(std::size_t(t));
  j.token_rel.resize(std::size_t(t));
  double ref2 = 0, out2 = 0;
  std::vector<WorstElement> elems;
  for (std::int64_t tok = 0; tok < t; ++tok) {
    double dot = 0, rr = 0, oo = 0, dd = 0, idd = 0, irr = 0, idot = 0, ioo = 0;
    for (std::int64_t c = 0; c < h; ++c) {
      const std::int64_t i = tok * h + c;
      const std::uint32_t bits = raw_bits(out, i);
      if (bits == sentinel || bits == sentinel2) { ++j.unwritten; continue; }
      const double o = element_as_f32(out, i), r = ref[i];
      if (!std::isfinite(o)) { ++j.non_finite; continue; }
      if (th.bitwise && bits != ref_bits_in(out.dtype(), ref[i])) ++j.bit_mismatches;
      dot += o * r; rr += r * r; oo += o * o; dd += (o - r) * (o - r);
      j.max_abs = std::max(j.max_abs, std::fabs(o - r));
      const double band = th.atol + th.rtol * std::fabs(r);
      if (std::fabs(o - r) > band) {
        ++j.mismatches;
        elems.push_back({tok, c, float(r), float(o)});
      }
      if (!ideal.empty()) {
        const double ir = ideal[i];
        idot += o * ir; irr += ir * ir; ioo += o * o; idd += (o - ir) * (o - ir);
      }
    }
    ref2 += rr; out2 += oo;
    const double nr = std::sqrt(rr), no = std::sqrt(oo);
    const double cos = (nr < th.rel_floor && no < th.rel_floor) ? 1.0 : (nr == 0 || no == 0 ? 0.0 : dot / (nr * no));
    const double rel = std::sqrt(dd) / std::max(nr, th.rel_floor);
    j.token_cos[tok] = cos;
    j.token_rel[tok] = rel;
    if (j.min_cos_token < 0 || cos < j.min_cos) { j.min_cos = cos; j.min_cos_token = tok; }
    if (j.max_rel_token < 0 || rel > j.max_rel) { j.max_rel = rel; j.max_rel_token = tok; }
    if (!ideal.empty()) {
      const double inr = std::sqrt(irr), ino = std::sqrt(ioo);
      const double icos = (inr < th.rel_floor && ino < th.rel_floor) ? 1.0 : (inr == 0 || ino == 0 ? 0.0 : idot / (inr * ino));
      j.ideal_min_cos = std::min(j.ideal_min_cos, icos);
      j.ideal_max_rel = std::max(j.ideal_max_rel, std::sqrt(idd) / std::max(inr, th.rel_floor));
    }
  }
  j.ref_norm = std::sqrt(ref2);
  if (j.ref_norm == 0.0)
    throw_harness_error("reference", "the contract reference is all zeros: the fixture proves nothing about the kernel",
                        "change the case's seed, input distribution or weight_std");
  j.out_norm = std::sqrt(out2);
  j.mismatch_fraction = double(j.mismatches) / double(std::max<std::int64_t>(1, t * h));

  std::vector<std::int64_t> order(static_cast<std::size_t>(t));
  for (std::int64_t i = 0; i < t; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return j.token_rel[a] > j.token_rel[b] || (j.token_rel[a] == j.token_rel[b] && a < b); });
  for (std::size_t i = 0; i < std::min<std::size_t>(5, order.size()); ++i) {
    WorstToken w{order[i], j.token_cos[order[i]], j.token_rel[order[i]], {}, {}};
    for (int k = 0; k < routing.k; ++k) {
      w.experts.push_back(routing.ids[order[i] * routing.k + k]);
      w.weights.push_back(routing.weights[order[i] * routing.k + k]);
    }
    j.worst_tokens.push_back(std::move(w));
  }
  std::sort(elems.begin(), elems.end(), [](const WorstElement& a, const WorstElement& b) {
    return std::fabs(a.out - a.ref) > std::fabs(b.out - b.ref);
  });
  if (elems.size() > 8) elems.resize(8);
  j.worst_elements = std::move(elems);

  auto fail = [&](const char* check, std::string why) {
    if (j.failed_check.empty()) { j.failed_check = check; j.summary = std::move(why); }
  };
  if (j.unwritten > 0) fail("unwritten", fmt::format("{} output elements never written (still the NaN sentinel)", j.unwritten));
  if (j.non_finite > 0) fail("non_finite", fmt::format("{} non-finite output elements", j.non_finite));
  if (j.ref_norm > 0 && j.out_norm == 0) fail("zero_output", "the output is all zeros while the reference is not");
  if (th.bitwise && j.bit_mismatches > 0) fail("bitwise", fmt::format("{} elements differ from the exact-tier reference bit for bit", j.bit_mismatches));
  if (j.min_cos < th.min_cos) fail("min_cos", fmt::format("token {} cos {:.6f} < {:.6f}", j.min_cos_token, j.min_cos, th.min_cos));
  if (j.max_rel > th.max_rel) fail("max_rel", fmt::format("token {} rel {:.3e} > {:.3e}", j.max_rel_token, j.max_rel, th.max_rel));
  if (j.mismatch_fraction > th.max_mismatch_fraction)
    fail("mismatch_fraction", fmt::format("{:.3e} of elements outside atol {:g} + rtol {:g} * |ref| (> {:.3e})",
                                          j.mismatch_fraction, th.atol, th.rtol, th.max_mismatch_fraction));
  j.pass = j.failed_check.empty();
  if (j.pass) j.summary = fmt::format("min cos {:.6f}, max rel {:.3e}", j.min_cos, j.max_rel);
  return j;
}

std::string Judgement::details() const {
  std::string s = fmt::format(
      "  min_cos {:.6f} (token {}), max_rel {:.3e} (token {}), max_abs {:.3e}, mismatch_fraction {:.3e} ({} elements),\n"
      "  non_finite {}, unwritten {}, bit_mismatches {}, ||ref|| {:.4g}, ||out|| {:.4g}; vs ideal: min_cos {:.6f}, max_rel {:.3e}\n",
      min_cos, min_cos_token, max_rel, max_rel_token, max_abs, mismatch_fraction, mismatches, non_finite, unwritten,
      bit_mismatches, ref_norm, out_norm, ideal_min_cos, ideal_max_rel);
  s += "  worst tokens (token: cos, rel, experts, weights):\n";
  for (const auto& w : worst_tokens)
    s += fmt::format("    {}: cos {:.6f}, rel {:.3e}, experts [{}], weights [{:.4f}]\n", w.token, w.cos, w.rel,
                     fmt::join(w.experts, ", "), fmt::join(w.weights, ", "));
  if (!worst_elements.empty()) {
    s += "  worst elements (token, column: ref -> out):\n";
    for (const auto& e : worst_elements) s += fmt::format("    {}, {}: {:.6g} -> {:.6g}\n", e.token, e.column, e.ref, e.out);
  }
  return s;
}

}  // namespace moe
