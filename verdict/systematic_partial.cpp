#include "verdict/systematic_partial.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <set>

#include "fixtures/tensor_element.hpp"
#include "verdict/systematic_max.hpp"
#include "verdict/systematic_sums.hpp"

namespace moe {
namespace {

double err(const SystematicInput& in, std::int64_t i) { return double(element_as_f32(in.out, i)) - in.ref[std::size_t(i)]; }

// One local token-slot (index tok * k + j into the routing) and the sums of the error's regression on its
// contribution s: sum e s, sum s^2 and the terms of its element-wise HC0 variance (TokenSums, one group, no clusters).
struct SlotFit {
  std::int64_t slot, expert;
  TokenSums sums;
};

// Every token-slot routed to an expert of this rank whose contribution is not all zero.
std::vector<SlotFit> local_slot_fits(const SystematicInput& in) {
  const std::int64_t h = in.hidden, k = in.routing.k;
  std::vector<SlotFit> fits;
  for (std::int64_t i = 0; i < in.tokens * k; ++i) {
    const std::int64_t x = std::int64_t(in.routing.ids[std::size_t(i)]) - in.first_local_expert;
    if (x < 0 || x >= in.local_experts) continue;
    const float* c = in.slots.data() + i * h;
    const std::int64_t tok = i / k;
    SlotFit f{i, x + in.first_local_expert, {}};
    for (std::int64_t col = 0; col < h; ++col) {
      const double sc = c[col], e = err(in, tok * h + col), s2 = sc * sc;
      f.sums += TokenSums{e * sc, s2, s2 * e * e, s2 * sc * e, s2 * s2};
    }
    if (f.sums.rr > 0) fits.push_back(f);
  }
  return fits;
}

const char* kNoSlots = "no slot contributions kept for this case (above 2^24 values): `expert` uses its token groups";
}  // namespace

// Each local token-slot's own gain beta with its element-wise HC0 z, corrected for the number of local token-slots
// (a max over that many null tests). Shown: a failing token-slot, else the one closest to failing.
void expert_partial(const SystematicInput& in, StatisticRecord& s) {
  if (in.slots.empty()) return void(not_run(s, kNoSlots));
  const std::vector<SlotFit> fits = local_slot_fits(in);
  if (fits.empty()) return void(not_run(s, "no token-slot of this rank's experts has a nonzero contribution"));
  std::vector<Component> cs;
  for (std::size_t i = 0; i < fits.size(); ++i) {
    const double beta = fits[i].sums.slope(), z = z_of(beta, component_se(std::sqrt(fits[i].sums.variance()), s));
    if (!std::isnan(z)) cs.push_back({z, beta, std::int64_t(i)});  // NaN: no error on this slot's token
  }
  std::function<std::vector<double>(std::int64_t)> candidates;
  if (in.steps)
    candidates = [&](std::int64_t id) {
      const SlotFit& f = fits[std::size_t(id)];
      return step_effects(in.steps(f.slot / in.routing.k, f.slot % in.routing.k), in.slots.data() + f.slot * in.hidden,
                          in.hidden, f.sums.rr);
    };
  const std::vector<double> taken = explain_steps(cs, candidates);
  const std::int64_t shown = pick_component(cs, s);
  if (shown < 0) return void(not_run(s, "no token-slot of this rank's experts meets an error"));
  const SlotFit& f = fits[std::size_t(cs[std::size_t(shown)].id)];
  s.at = fmt::format("expert {}, token {} slot {} (of {} token-slot(s)){}", f.expert, f.slot / in.routing.k,
                     f.slot % in.routing.k, cs.size(), step_note(taken[std::size_t(shown)]));
}

// u_tj = sign(<e_t, s_tj>) over the local token-slots; the mean sign's standard error is the larger of the null's
// element-wise sqrt(sum u^2) / n and the token-clustered one (the slots of a token share its error); effect: the
// pooled slope sum <e, s> / sum <s, s>.
void slot_direction(const SystematicInput& in, StatisticRecord& s) {
  if (in.slots.empty()) return void(not_run(s, kNoSlots));
  const std::vector<SlotFit> fits = local_slot_fits(in);
  if (fits.empty()) return void(not_run(s, "no token-slot of this rank's experts has a nonzero contribution"));
  const std::int64_t k = in.routing.k;
  std::vector<double> tok_u(std::size_t(in.tokens), 0.0), tok_n(std::size_t(in.tokens), 0.0);
  double es = 0, ss = 0, sum_u = 0, sum_u2 = 0;
  for (const SlotFit& f : fits) {
    const double u = f.sums.er > 0 ? 1.0 : f.sums.er < 0 ? -1.0 : 0.0;
    es += f.sums.er; ss += f.sums.rr; sum_u += u; sum_u2 += u * u;
    tok_u[std::size_t(f.slot / k)] += u;
    tok_n[std::size_t(f.slot / k)] += 1;
  }
  const double n = double(fits.size()), mean = sum_u / n;
  double cvar = 0;
  std::int64_t clusters = 0;
  for (std::size_t t = 0; t < tok_u.size(); ++t) {
    if (tok_n[t] == 0) continue;
    cvar += (tok_u[t] - mean * tok_n[t]) * (tok_u[t] - mean * tok_n[t]);
    ++clusters;
  }
  s.z = z_of(mean, robust_se(sum_u2 / (n * n), cvar / (n * n), clusters) * s.se_scale);
  s.effect = es / ss;
  s.at = fmt::format("{:+.0f} of {} token-slot signs", sum_u, fits.size());
  if (std::isnan(s.z)) not_run(s, "no token-slot's contribution meets an error");
}

std::vector<ChannelGroup> channel_groups(std::int64_t hidden, const std::vector<double>& energy) {
  std::vector<ChannelGroup> groups;
  std::set<std::int64_t> sizes{32, 64, 128, hidden / 8};
  for (std::int64_t b : sizes) {
    if (b < 2 || b >= hidden) continue;
    for (std::int64_t lo = 0; lo < hidden; lo += b) {
      const std::int64_t hi = std::min(hidden, lo + b);
      if (hi - lo < 2) continue;
      ChannelGroup g{fmt::format("channels {}-{}", lo, hi - 1), {}};
      for (std::int64_t c = lo; c < hi; ++c) g.channels.push_back(c);
      groups.push_back(std::move(g));
    }
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(hidden));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return energy[a] > energy[b]; });
  for (std::int64_t n : std::set<std::int64_t>{32, hidden / 8}) {
    if (n < 2 || n >= hidden) continue;
    groups.push_back({fmt::format("the {} channels of largest reference energy", n),
                      std::vector<std::int64_t>(order.begin(), order.begin() + n)});
  }
  return groups;
}

// Each group's gain, as `gain` computes it over the group's elements (TokenSums: element-wise HC0 or clustered by
// token, the larger), its z corrected for the number of groups. Shown: the group closest to failing.
void channel_group(const SystematicInput& in, StatisticRecord& s) {
  const std::int64_t t = in.tokens, h = in.hidden;
  std::vector<double> energy(std::size_t(h), 0.0);
  for (std::int64_t i = 0; i < t * h; ++i) energy[std::size_t(i % h)] += double(in.ref[std::size_t(i)]) * in.ref[std::size_t(i)];
  const std::vector<ChannelGroup> groups = channel_groups(h, energy);
  if (groups.empty()) return void(not_run(s, fmt::format("{} channel(s): no group between one channel and all", h)));
  std::vector<Component> cs;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    TokenSums all;
    for (std::int64_t tok = 0; tok < t; ++tok) {
      TokenSums one;
      for (std::int64_t c : groups[gi].channels) {
        const double r = in.ref[std::size_t(tok * h + c)], e = err(in, tok * h + c), r2 = r * r;
        one += TokenSums{e * r, r2, r2 * e * e, r2 * r * e, r2 * r2};
      }
      one.close_token();
      all += one;
    }
    if (!(all.rr > 0)) continue;
    const double b = all.slope(), z = z_of(b, component_se(std::sqrt(all.variance()), s));
    if (!std::isnan(z)) cs.push_back({z, b, std::int64_t(gi)});
  }
  const std::int64_t shown = pick_component(cs, s);
  if (shown < 0) return void(not_run(s, "no channel group has both a nonzero reference and an error"));
  s.at = fmt::format("{} (of {} groups)", groups[std::size_t(cs[std::size_t(shown)].id)].label, cs.size());
}

}  // namespace moe
