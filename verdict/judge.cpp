#include "verdict/judge.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <fmt/format.h>

#include "fixtures/error.hpp"
#include "formats/bf16.hpp"
#include "formats/fp16.hpp"
#include "fixtures/tensor_element.hpp"

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

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kWorstElements = 8, kWorstTokens = 5;

// cos of two vectors given their dot product and norms; 1 when both are below the floor (nothing to compare).
double cosine(double dot, double nr, double no, double floor) {
  if (nr < floor && no < floor) return 1.0;
  return nr == 0 || no == 0 ? 0.0 : dot / (nr * no);
}
// Whether a is a worse cos than b (a worse rel with `higher`): NaN is the worst value of all.
bool worse(double a, double b, bool higher) {
  if (std::isnan(b)) return false;
  return std::isnan(a) || (higher ? a > b : a < b);
}
// Keeps the kWorstElements worst elements seen, bad (unwritten or non-finite) ones first in the order seen.
void note_element(std::vector<WorstElement>& w, const WorstElement& e) {
  auto ahead = [](const WorstElement& a, const WorstElement& b) {
    const bool ba = !std::isfinite(a.out), bb = !std::isfinite(b.out);
    if (ba != bb) return ba;
    return !ba && std::fabs(a.out - a.ref) > std::fabs(b.out - b.ref);
  };
  if (w.size() == kWorstElements && !ahead(e, w.back())) return;
  w.insert(std::upper_bound(w.begin(), w.end(), e, ahead), e);
  if (w.size() > kWorstElements) w.pop_back();
}
std::string num(double v, const char* f) { return std::isnan(v) ? "NaN" : fmt::format(fmt::runtime(f), v); }
}  // namespace

namespace {
// The tokens below min_cos whose error is inside the requantization band (Thresholds::band_factor), the allowance,
// and the lowest cos among the other tokens.
struct Band {
  std::vector<std::int64_t> tokens;
  std::int64_t allowance = 0;
  double max_ratio = 0, strict_min_cos = 1, strict_max_rel = 0;
  std::int64_t strict_min_cos_token = -1, strict_max_rel_token = -1;
};
bool band_on(const Judgement& j, const Thresholds& th, std::int64_t t) {
  return th.band_factor > 0 && std::int64_t(j.token_noise.size()) == t;
}
// Whether token tok's rel is inside the band's edge, min(band_factor q_t, kBandEdgeMaxRel max_rel). NaN rel (an
// unwritten or non-finite element) is never inside; a non-finite q_t gives no edge.
bool inside_edge(const Judgement& j, const Thresholds& th, std::int64_t tok, double* edge_out = nullptr) {
  const double q = j.token_noise[tok];
  const double edge = std::isfinite(q) ? std::min(th.band_factor * q, kBandEdgeMaxRel * th.max_rel) : 0.0;
  if (edge_out) *edge_out = edge;
  return j.token_rel[tok] <= edge;
}
// explained(tok): whether a token the band's rule takes is a requantization difference (else it leaves the band).
Band requant_band(const Judgement& j, const Thresholds& th, std::int64_t t,
                  const std::function<bool(std::int64_t)>& explained) {
  Band b;
  const bool on = band_on(j, th, t);
  if (on) b.allowance = th.band_allowance >= 0 ? th.band_allowance : requant_band_allowance(th.band_fraction, t);
  for (std::int64_t tok = 0; tok < t; ++tok) {
    const double cos = j.token_cos[tok], rel = j.token_rel[tok];
    double edge = 0;
    if (on && cos < th.min_cos && inside_edge(j, th, tok, &edge) && explained(tok)) {
      b.tokens.push_back(tok);
      b.max_ratio = std::max(b.max_ratio, rel / edge);
      continue;
    }
    if (b.strict_min_cos_token < 0 || worse(cos, b.strict_min_cos, false)) { b.strict_min_cos = cos; b.strict_min_cos_token = tok; }
    if (b.strict_max_rel_token < 0 || worse(rel, b.strict_max_rel, true)) { b.strict_max_rel = rel; b.strict_max_rel_token = tok; }
  }
  return b;
}
}  // namespace

Judgement judge(const std::vector<float>& ref, const std::vector<float>& ideal, const Tensor& out, std::int64_t t,
                std::int64_t h, const Thresholds& th, const RoutingResult& routing, const BandExplainer& explain) {
  Judgement j;
  const std::uint32_t sentinel = sentinel_bits(out.dtype(), 0), sentinel2 = sentinel_bits(out.dtype(), 1);
  for (std::int64_t i = 0; i < t * h; ++i)
    if (!std::isfinite(ref[i]))
      throw_harness_error("reference", fmt::format("non-finite reference value {} at token {}, column {}", ref[i], i / h, i % h),
                          "the fixture or the reference is broken; this is never a kernel verdict");
  j.token_cos.resize(std::size_t(t));
  j.token_rel.resize(std::size_t(t));
  std::vector<std::int64_t> tok_unwritten(std::size_t(t), 0), tok_non_finite(std::size_t(t), 0),
      tok_mismatches(std::size_t(t), 0);
  std::int64_t first_unwritten = -1, first_non_finite = -1, bad_tokens = 0, zero_ref_violation = -1;
  double zero_ref_abs = 0;
  double ref2 = 0, out2 = 0;
  for (std::int64_t tok = 0; tok < t; ++tok) {
    double dot = 0, rr = 0, oo = 0, dd = 0, idd = 0, irr = 0, idot = 0, qq = 0;
    for (std::int64_t c = 0; c < h; ++c) {
      const std::int64_t i = tok * h + c;
      const double r = ref[i], ir = ideal.empty() ? 0.0 : ideal[i];
      rr += r * r;  // every reference element, whatever the output holds there
      irr += ir * ir;
      qq += (ir - r) * (ir - r);
      const std::uint32_t bits = raw_bits(out, i);
      const bool unwritten = bits == sentinel || bits == sentinel2;
      const double o = element_as_f32(out, i);
      if (unwritten || !std::isfinite(o)) {
        ++(unwritten ? tok_unwritten : tok_non_finite)[std::size_t(tok)];
        ++j.mismatches;  // no band around the reference holds a NaN or an Inf
        ++tok_mismatches[std::size_t(tok)];
        note_element(j.worst_elements, {tok, c, float(r), unwritten ? std::numeric_limits<float>::quiet_NaN() : float(o), unwritten});
        continue;
      }
      if (th.bitwise && bits != ref_bits_in(out.dtype(), ref[i])) ++j.bit_mismatches;
      dot += o * r; oo += o * o; dd += (o - r) * (o - r);
      j.max_abs = std::max(j.max_abs, std::fabs(o - r));
      if (std::fabs(o - r) > th.atol + th.rtol * std::fabs(r)) {
        ++j.mismatches;
        ++tok_mismatches[std::size_t(tok)];
        note_element(j.worst_elements, {tok, c, float(r), float(o), false});
      }
      idot += o * ir; idd += (o - ir) * (o - ir);
    }
    ref2 += rr; out2 += oo;
    const std::int64_t nu = tok_unwritten[std::size_t(tok)], nf = tok_non_finite[std::size_t(tok)];
    j.unwritten += nu;
    j.non_finite += nf;
    if (nu && first_unwritten < 0) first_unwritten = tok;
    if (nf && first_non_finite < 0) first_non_finite = tok;
    bad_tokens += (nu + nf) > 0;
    const double nr = std::sqrt(rr), no = std::sqrt(oo), inr = std::sqrt(irr);
    const bool bad = nu + nf > 0;
    // A token whose reference is exactly 0 where the case expects such tokens: absolute error, tolerance 0.
    const bool zero_ref = th.zero_reference_expected && rr == 0 && !bad;
    if (zero_ref && oo > 0 && zero_ref_violation < 0) zero_ref_violation = tok, zero_ref_abs = std::sqrt(dd);
    double cos = bad ? kNaN : cosine(dot, nr, no, th.rel_floor);
    double rel = bad ? kNaN : std::sqrt(dd) / std::max(nr, th.rel_floor);
    if (zero_ref) cos = oo > 0 ? 0.0 : 1.0, rel = oo > 0 ? std::numeric_limits<double>::infinity() : 0.0;
    j.token_cos[tok] = cos;
    j.token_rel[tok] = rel;
    if (!ideal.empty()) j.token_noise.push_back(std::sqrt(qq) / std::max(nr, th.rel_floor));
    if (j.min_cos_token < 0 || worse(cos, j.min_cos, false)) { j.min_cos = cos; j.min_cos_token = tok; }
    if (j.max_rel_token < 0 || worse(rel, j.max_rel, true)) { j.max_rel = rel; j.max_rel_token = tok; }
    if (!ideal.empty()) {
      const double icos = bad ? kNaN : cosine(idot, inr, no, th.rel_floor);
      const double irel = bad ? kNaN : std::sqrt(idd) / std::max(inr, th.rel_floor);
      if (worse(icos, j.ideal_min_cos, false)) j.ideal_min_cos = icos;
      if (worse(irel, j.ideal_max_rel, true)) j.ideal_max_rel = irel;
    }
  }
  j.ref_norm = std::sqrt(ref2);
  if (j.ref_norm == 0.0 && !th.zero_reference_expected)
    throw_harness_error("reference", "the contract reference is all zeros: the fixture proves nothing about the kernel",
                        "change the case's seed, input distribution or weight_std, or lower an activation amax floor "
                        "(quant.amax_floor, a contract's token_floor / group_floor) that rounds every activation to 0");
  const bool any_bad = j.unwritten + j.non_finite > 0;
  j.out_norm = any_bad ? kNaN : std::sqrt(out2);
  if (any_bad) j.max_abs = kNaN;
  j.mismatch_fraction = double(j.mismatches) / double(std::max<std::int64_t>(1, t * h));

  std::vector<std::int64_t> order(static_cast<std::size_t>(t));
  for (std::int64_t i = 0; i < t; ++i) order[i] = i;
  const std::size_t shown = std::min(kWorstTokens, order.size());
  std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(shown), order.end(), [&](auto a, auto b) {
    const double ra = j.token_rel[a], rb = j.token_rel[b];
    if (std::isnan(ra) != std::isnan(rb)) return std::isnan(ra);
    return std::isnan(ra) ? a < b : (ra > rb || (ra == rb && a < b));
  });
  for (std::size_t i = 0; i < shown; ++i) {
    const std::int64_t tok = order[i];
    WorstToken w{tok, j.token_cos[tok], j.token_rel[tok], tok_unwritten[tok], tok_non_finite[tok], {}, {}};
    for (int k = 0; k < routing.k; ++k) {
      w.experts.push_back(routing.ids[tok * routing.k + k]);
      w.weights.push_back(routing.weights[tok * routing.k + k]);
    }
    j.worst_tokens.push_back(std::move(w));
  }

  auto fail = [&](Check check, std::string why) {
    if (j.failed_check == Check::none) { j.failed_check = check; j.summary = std::move(why); }
  };
  if (j.unwritten > 0)
    fail(Check::unwritten, fmt::format("{} output elements never written (still the NaN sentinel), first in token {}; {} "
                                  "token(s) without cos or rel", j.unwritten, first_unwritten, bad_tokens));
  if (j.non_finite > 0)
    fail(Check::non_finite, fmt::format("{} non-finite output elements, first in token {}; {} token(s) without cos or rel",
                                   j.non_finite, first_non_finite, bad_tokens));
  if (j.ref_norm > 0 && j.out_norm == 0) fail(Check::zero_output, "the output is all zeros while the reference is not");
  if (th.bitwise && j.bit_mismatches > 0) fail(Check::bitwise, fmt::format("{} elements differ from the exact-tier reference bit for bit", j.bit_mismatches));
  if (zero_ref_violation >= 0)
    fail(Check::max_rel, fmt::format("token {}: the reference is exactly 0 (every slot masked, zero-weighted or on another "
                                     "rank) and the output is not (||o|| {:.3e}): such a token is judged by absolute "
                                     "error with tolerance 0", zero_ref_violation, zero_ref_abs));
  // Written so that a NaN metric fails too.
  j.band_explain_run = bool(explain);
  auto explained = [&](std::int64_t tok) {
    if (!explain) return true;
    std::vector<double> e(static_cast<std::size_t>(h));
    for (std::int64_t c = 0; c < h; ++c) e[c] = double(element_as_f32(out, tok * h + c)) - double(ref[tok * h + c]);
    BandExplanation x = explain(tok, e);
    j.band_explain_ratio = std::max(j.band_explain_ratio, x.ratio);
    ++(x.explained ? j.band_explained : j.band_rejected);
    j.band_undecisive += x.explained && !x.decisive;
    const bool ok = x.explained;
    j.band_explanations.emplace_back(tok, std::move(x));
    return ok;
  };
  const Band band = requant_band(j, th, t, explained);
  std::string rejected;
  for (const auto& [tok, x] : j.band_explanations)
    if (!x.explained && rejected.empty())
      rejected = fmt::format("; token {} (cos {:.6f}) is not a requantization difference (residual {:.1f} x the contract "
                             "noise, limit {:g}){}", tok, j.token_cos[tok], x.ratio, kExplainMaxRatio,
                             j.band_rejected > 1 ? fmt::format(", {} such tokens", j.band_rejected) : "");
  j.band_tokens = std::int64_t(band.tokens.size());
  j.band_allowance = band.allowance;
  j.band_max_ratio = band.max_ratio;
  const bool band_holds = !band.tokens.empty() && j.band_tokens <= band.allowance;
  j.strict_min_cos = band_holds ? band.strict_min_cos : j.min_cos;
  if (!(j.strict_min_cos >= th.min_cos)) {
    const std::int64_t tok = band_holds ? band.strict_min_cos_token : j.min_cos_token;
    fail(Check::min_cos, fmt::format("token {} cos {:.6f} < {:.6f}{}{}", tok, j.strict_min_cos, th.min_cos,
                                     band.tokens.empty() ? "" : band_holds ? fmt::format("; {} token(s) inside the requantization band", j.band_tokens)
                                     : fmt::format("; {} tokens inside the requantization band, more than the {} a correct kernel's "
                                                   "requantization moves", j.band_tokens, band.allowance), rejected));
  }
  j.strict_max_rel = band_holds ? band.strict_max_rel : j.max_rel;
  if (!(j.strict_max_rel <= th.max_rel)) {
    const std::int64_t tok = band_holds ? band.strict_max_rel_token : j.max_rel_token;
    fail(Check::max_rel, fmt::format("token {} rel {:.3e} > {:.3e}{}{}", tok, j.strict_max_rel, th.max_rel,
                                     band_holds ? fmt::format("; {} token(s) inside the requantization band", j.band_tokens) : "",
                                     rejected));
  }
  // Where the envelope's members leave the tolerance themselves (th.band_elements), the mismatch fraction is taken
  // over the tokens that are not requantization differences (docs/judging.md "The element band and the
  // requantization band"): a band token's elements do not count while the band holds; and while the fraction is
  // over its limit, a further token with elements outside the tolerance whose rel is inside the band's edge and
  // whose error the explanation test explains joins the band (most such elements first), within the same
  // allowance. At one token a group's amax moving one intermediate ulp requantizes the whole row: tens of elements
  // leave the tolerance at once, a correct kernel's requantization state that no per-element tolerance models.
  std::int64_t strict = j.mismatches;
  if (band_holds && th.band_elements)
    for (std::int64_t tok : band.tokens) strict -= tok_mismatches[std::size_t(tok)];
  const double elements = double(std::max<std::int64_t>(1, t * h));
  const std::int64_t in_band = std::int64_t(band.tokens.size());
  if (th.band_elements && !(double(strict) / elements <= th.max_mismatch_fraction) && band_on(j, th, t) &&
      in_band < band.allowance) {
    std::vector<std::int64_t> candidates;
    for (std::int64_t tok = 0; tok < t; ++tok)  // band.tokens is ascending
      if (tok_mismatches[std::size_t(tok)] > 0 && !std::binary_search(band.tokens.begin(), band.tokens.end(), tok) &&
          inside_edge(j, th, tok))
        candidates.push_back(tok);
    std::stable_sort(candidates.begin(), candidates.end(), [&](std::int64_t a, std::int64_t b) {
      return tok_mismatches[std::size_t(a)] > tok_mismatches[std::size_t(b)];
    });
    for (std::int64_t tok : candidates) {
      if (double(strict) / elements <= th.max_mismatch_fraction || in_band + j.mismatch_band_tokens >= band.allowance)
        break;
      if (!explained(tok)) continue;
      strict -= tok_mismatches[std::size_t(tok)];
      ++j.mismatch_band_tokens;
    }
  }
  j.strict_mismatch_fraction = double(strict) / elements;
  if (!(j.strict_mismatch_fraction <= th.max_mismatch_fraction))
    fail(Check::mismatch_fraction,
         fmt::format("{:.3e} of elements outside atol {:g} + rtol {:g} * |ref| (> {:.3e}){}", j.strict_mismatch_fraction,
                     th.atol, th.rtol, th.max_mismatch_fraction,
                     strict < j.mismatches ? fmt::format(" over the tokens outside the requantization band ({:.3e} over "
                                                         "every token)", j.mismatch_fraction) : ""));
  j.pass = j.failed_check == Check::none;
  if (j.pass)
    j.summary = fmt::format("min cos {:.6f}, max rel {:.3e}{}", j.min_cos, j.max_rel,
                            j.band_tokens ? fmt::format("; {} token(s) inside the requantization band (allowance {}, at "
                                                        "{:.2f} of its edge)", j.band_tokens, j.band_allowance, j.band_max_ratio)
                                          : "");
  return j;
}

std::string Judgement::band_explain_lines() const {
  if (!band_explain_run)
    return band_tokens + mismatch_band_tokens > 0
               ? "  band explanation: not run (no weights to explain with: an exported reference); the band's rule "
                 "alone decided\n"
               : "";
  if (band_explanations.empty()) return "";
  std::string s = fmt::format("  band explanation: {} token(s) tested, {} explained ({} not decisive), {} rejected as not a "
                              "requantization difference; worst residual {:.2f} x the contract noise (limit {:g})\n",
                              band_explanations.size(), band_explained, band_undecisive, band_rejected,
                              band_explain_ratio, kExplainMaxRatio);
  std::size_t shown = 0;
  for (const auto& [tok, x] : band_explanations) {
    if (shown++ == 4) break;
    s += fmt::format("    token {}: residual {:.2f} x noise (||e|| {:.3e}, noise {:.3e}), {} flip + {} scale column(s) of H "
                     "{}, max |c| {:.2f} step(s){}{}{}\n", tok, x.ratio, x.error_norm, x.noise, x.flip_columns,
                     x.scale_columns, x.hidden, x.max_coef, x.explained ? "" : ": not a requantization difference",
                     x.explained && !x.decisive ? ": not decisive (an error this size in a random direction would be "
                                                  "explained too)" : "",
                     x.used.empty() ? "" : fmt::format("; largest: {}", fmt::join(x.used, "; ")));
  }
  return s;
}

std::string Judgement::details() const {
  std::string s = fmt::format(
      "  min_cos {} (token {}), max_rel {} (token {}), max_abs {}, mismatch_fraction {:.3e} ({} elements),\n"
      "  non_finite {}, unwritten {}, bit_mismatches {}, ||ref|| {:.4g}, ||out|| {}; vs ideal: min_cos {}, max_rel {}\n",
      num(min_cos, "{:.6f}"), min_cos_token, num(max_rel, "{:.3e}"), max_rel_token, num(max_abs, "{:.3e}"),
      mismatch_fraction, mismatches, non_finite, unwritten, bit_mismatches, ref_norm, num(out_norm, "{:.4g}"),
      num(ideal_min_cos, "{:.6f}"), num(ideal_max_rel, "{:.3e}"));
  if (band_tokens > 0)
    s += fmt::format("  requantization band: {} token(s) below min_cos with rel <= min(band_factor * q_t, {} * max_rel) "
                     "(allowance {}, the largest at {:.2f} of the edge); over the other tokens min_cos {}, max_rel {}\n",
                     band_tokens, kBandEdgeMaxRel, band_allowance, band_max_ratio, num(strict_min_cos, "{:.6f}"),
                     num(strict_max_rel, "{:.3e}"));
  if (mismatch_band_tokens > 0 || strict_mismatch_fraction != mismatch_fraction)
    s += fmt::format("  mismatch_fraction over the tokens outside the requantization band: {:.3e} ({} token(s) with "
                     "elements outside the tolerance joined the band)\n", strict_mismatch_fraction, mismatch_band_tokens);
  s += band_explain_lines();
  if (non_finite + unwritten > 0)
    s += "  NaN: a token with an unwritten or non-finite element has no cos or rel; such tokens are the worst, listed first\n";
  s += "  worst tokens (token: cos, rel, experts, weights):\n";
  for (const auto& w : worst_tokens)
    s += fmt::format("    {}: cos {}, rel {}{}, experts [{}], weights [{:.4f}]\n", w.token, num(w.cos, "{:.6f}"),
                     num(w.rel, "{:.3e}"),
                     w.unwritten + w.non_finite ? fmt::format(" ({} unwritten, {} non-finite)", w.unwritten, w.non_finite) : "",
                     fmt::join(w.experts, ", "), fmt::join(w.weights, ", "));
  if (!worst_elements.empty()) {
    s += "  worst elements (token, column: ref -> out):\n";
    for (const auto& e : worst_elements)
      s += fmt::format("    {}, {}: {:.6g} -> {}\n", e.token, e.column, e.ref,
                       e.unwritten ? std::string("unwritten") : fmt::format("{:.6g}", e.out));
  }
  return s;
}

}  // namespace moe
