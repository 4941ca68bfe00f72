// The sums and standard errors the systematic statistics share (verdict/systematic.cpp and
// verdict/systematic_partial.cpp): a least-squares slope of the error on a regressor with its element-wise and
// token-clustered variances, and the z of an estimate with its standard error.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "verdict/systematic.hpp"

namespace moe {

// Marks s as not computable: "not run: <why>", z and effect NaN (never a 0), not failed.
inline StatisticRecord& not_run(StatisticRecord& s, const std::string& why) {
  s.status = "not run: " + why;
  s.z = s.effect = std::numeric_limits<double>::quiet_NaN();
  s.failed = false;
  return s;
}

// z of an estimate with its standard error; a zero standard error around a nonzero estimate is as certain as it
// gets (+-kZCap), no error at all is NaN.
inline double z_of(double estimate, double se) {
  if (se > 0) return std::clamp(estimate / se, -kZCap, kZCap);
  return estimate == 0 ? std::numeric_limits<double>::quiet_NaN() : (estimate > 0 ? kZCap : -kZCap);
}

// The standard errors below are the larger of two estimates of the same variance. The element-wise one treats the
// T x H errors as independent; the token-clustered one treats each token's summed contribution as one independent
// draw (an upstream rounding flip moves every channel of its token together through W2, so a token's channels do
// not err independently; the element-wise estimate then understates the variance, by up to H times). With few
// tokens the clustered estimate is noisy (at T = 1 it is 0 by construction), hence the larger of the two.
// `clusters` counts the tokens; the clustered sum gets the small-sample factor G / (G - 1).
inline double robust_se(double element_var, double cluster_var, std::int64_t clusters) {
  const double c = clusters >= 2 ? cluster_var * double(clusters) / double(clusters - 1) : 0.0;
  return std::sqrt(std::max(element_var, c));
}

// Per token: the sums a group's slope and its two variances are made of (groups are unions of tokens). er, rr and
// the r^2-weighted terms are sums over the token's elements; the cluster terms are products of the token's own sums
// (er_t^2, er_t rr_t, rr_t^2), so that sum over the group's tokens of (er_t - g rr_t)^2 expands into them.
struct TokenSums {
  double er = 0, rr = 0, rree = 0, rrre = 0, rrrr = 0;
  double cer2 = 0, cerrr = 0, crr2 = 0, tokens = 0;
  TokenSums& operator+=(const TokenSums& o) {
    er += o.er; rr += o.rr; rree += o.rree; rrre += o.rrre; rrrr += o.rrrr;
    cer2 += o.cer2; cerrr += o.cerrr; crr2 += o.crr2; tokens += o.tokens;
    return *this;
  }
  TokenSums operator-(const TokenSums& o) const {
    return {er - o.er, rr - o.rr, rree - o.rree, rrre - o.rrre, rrrr - o.rrrr,
            cer2 - o.cer2, cerrr - o.cerrr, crr2 - o.crr2, tokens - o.tokens};
  }
  // A finished token's cluster terms from its element sums.
  void close_token() { cer2 = er * er; cerrr = er * rr; crr2 = rr * rr; tokens = 1; }
  double slope() const { return er / rr; }
  // The slope's variance, the larger of sum r^2 (e - g r)^2 / (sum r^2)^2 and sum_t (er_t - g rr_t)^2 / (sum r^2)^2.
  double variance() const {
    const double g = slope();
    const double element = std::max(0.0, rree - 2 * g * rrre + g * g * rrrr) / (rr * rr);
    const double cluster = std::max(0.0, cer2 - 2 * g * cerrr + g * g * crr2) / (rr * rr);
    const double se = robust_se(element, cluster, std::llround(tokens));
    return se * se;
  }
};

}  // namespace moe
