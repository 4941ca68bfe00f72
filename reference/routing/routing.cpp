#include "reference/routing/routing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace moe {
namespace {
// Indices of the k largest values; equal values: lower index first.
void top_k(const float* v, std::int64_t n, int k, std::int32_t* out) {
  std::vector<std::int32_t> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [v](std::int32_t a, std::int32_t b) {
    return v[a] > v[b] || (v[a] == v[b] && a < b);
  });
  std::copy(idx.begin(), idx.begin() + k, out);
}
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
}  // namespace

// The routing of the problem's kind, before its edge case.
static RoutingResult route_kind(const ProblemSpec& s, const Checkpoint& c);

RoutingResult softmax_topk(const float* logits, std::int64_t t, std::int64_t e, int k, bool renorm) {
  RoutingResult r{t, k, std::vector<std::int32_t>(std::size_t(t * k)), std::vector<float>(std::size_t(t * k))};
  std::vector<float> p(static_cast<std::size_t>(e));
  for (std::int64_t i = 0; i < t; ++i) {
    const float* l = logits + i * e;
    const float m = *std::max_element(l, l + e);
    float sum = 0.0f;
    for (std::int64_t j = 0; j < e; ++j) sum += (p[j] = std::exp(l[j] - m));
    for (std::int64_t j = 0; j < e; ++j) p[j] /= sum;
    std::int32_t* ids = r.ids.data() + i * k;
    top_k(p.data(), e, k, ids);
    float sel = 0.0f;
    for (int j = 0; j < k; ++j) sel += p[ids[j]];
    for (int j = 0; j < k; ++j) r.weights[i * k + j] = renorm ? p[ids[j]] / sel : p[ids[j]];
  }
  return r;
}

RoutingResult grouped_sigmoid_topk(const float* logits, const float* bias, std::int64_t t, std::int64_t e, int k,
                                   int n_group, int topk_group, bool renorm, float scaling) {
  RoutingResult r{t, k, std::vector<std::int32_t>(std::size_t(t * k)), std::vector<float>(std::size_t(t * k))};
  const std::int64_t per = e / n_group;
  std::vector<float> s(static_cast<std::size_t>(e)), c(static_cast<std::size_t>(e)), gscore(static_cast<std::size_t>(n_group));
  std::vector<std::int32_t> gsel(static_cast<std::size_t>(topk_group)), top2(2);
  for (std::int64_t i = 0; i < t; ++i) {
    for (std::int64_t j = 0; j < e; ++j) {
      s[j] = sigmoid(logits[i * e + j]);
      c[j] = s[j] + bias[j];
    }
    for (int g = 0; g < n_group; ++g) {
      top_k(c.data() + g * per, per, 2, top2.data());
      gscore[g] = c[g * per + top2[0]] + c[g * per + top2[1]];
    }
    top_k(gscore.data(), n_group, topk_group, gsel.data());
    std::vector<bool> kept(static_cast<std::size_t>(n_group), false);
    for (auto g : gsel) kept[g] = true;
    for (std::int64_t j = 0; j < e; ++j)
      if (!kept[j / per]) c[j] = -std::numeric_limits<float>::infinity();
    std::int32_t* ids = r.ids.data() + i * k;
    top_k(c.data(), e, k, ids);
    float sum = 0.0f;
    for (int j = 0; j < k; ++j) sum += s[ids[j]];
    for (int j = 0; j < k; ++j) {
      float w = s[ids[j]];
      if (renorm) w /= (sum + 1e-20f);
      r.weights[i * k + j] = w * scaling;
    }
  }
  return r;
}

RoutingResult sigmoid_top1(const float* logits, std::int64_t t, std::int64_t e) {
  RoutingResult r{t, 1, std::vector<std::int32_t>(std::size_t(t)), std::vector<float>(std::size_t(t))};
  for (std::int64_t i = 0; i < t; ++i) {
    top_k(logits + i * e, e, 1, &r.ids[i]);
    r.weights[i] = sigmoid(logits[i * e + r.ids[i]]);
  }
  return r;
}

void apply_routing_edge(const ProblemSpec& s, RoutingResult& r) {
  const std::int64_t t = r.tokens, k = r.k, first = s.first_local_expert(), local = s.local_experts();
  // Replaces every id of token tok for which `bad` holds by the lowest id for which it does not hold and that the
  // token does not hold yet (validate() guarantees there are enough).
  auto replace = [&](std::int64_t tok, auto bad) {
    std::int32_t* ids = r.ids.data() + tok * k;
    for (std::int64_t j = 0; j < k; ++j) {
      if (!bad(ids[j])) continue;
      for (std::int32_t cand = 0; cand < s.experts; ++cand)
        if (!bad(cand) && std::find(ids, ids + k, cand) == ids + k) { ids[j] = cand; break; }
    }
  };
  for (std::int64_t tok = 0; tok < t; ++tok) {
    std::int32_t* ids = r.ids.data() + tok * k;
    float* w = r.weights.data() + tok * k;
    switch (s.routing.edge) {
      case RoutingEdge::none: break;
      case RoutingEdge::duplicate_id:
        if (tok % 2 == 0 && k >= 2) ids[1] = ids[0];
        break;
      case RoutingEdge::masked_ids:
        ids[k - 1] = -1;
        if (tok == t - 1) std::fill(ids, ids + k, -1);
        break;
      case RoutingEdge::one_expert:
        for (std::int64_t j = 0; j < k; ++j) ids[j] = std::int32_t(first + j);
        break;
      case RoutingEdge::empty_experts: replace(tok, [](std::int32_t id) { return id % 2 != 0; }); break;
      case RoutingEdge::zero_weights:
        w[k - 1] = 0.0f;
        if (tok == 0) std::fill(w, w + k, 0.0f);
        break;
      case RoutingEdge::ep_rank_empty:
        replace(tok, [&](std::int32_t id) { return id >= first && id < first + local; });
        break;
    }
  }
}

RoutingResult route(const ProblemSpec& s, const Checkpoint& c) {
  RoutingResult r = route_kind(s, c);
  apply_routing_edge(s, r);
  return r;
}

static RoutingResult route_kind(const ProblemSpec& s, const Checkpoint& c) {
  const float* l = c.router_logits.span<float>().data();
  switch (s.routing.kind) {
    case RoutingKind::softmax_topk: return softmax_topk(l, s.tokens, s.experts, s.topk, s.routing.renormalize);
    case RoutingKind::grouped_sigmoid:
      return grouped_sigmoid_topk(l, c.score_bias.span<float>().data(), s.tokens, s.experts, s.topk, s.routing.n_group,
                                  s.routing.topk_group, s.routing.renormalize, s.routing.routed_scaling);
    case RoutingKind::sigmoid_top1: return sigmoid_top1(l, s.tokens, s.experts);
    case RoutingKind::precomputed: {
      RoutingResult r{s.tokens, s.topk, {}, {}};
      auto ids = c.topk_ids.span<std::int32_t>();
      auto w = c.topk_weights.span<float>();
      r.ids.assign(ids.begin(), ids.end());
      r.weights.assign(w.begin(), w.end());
      return r;
    }
  }
  return {};
}

}  // namespace moe
