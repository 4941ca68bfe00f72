#include "verdict/systematic_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace moe {
namespace {
constexpr int kMaxIterations = 100000;
constexpr double kEps = 1e-16;

// log P(a, x) by the series e^-x x^a / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)), for x < a + 1.
double log_lower_series(double a, double x) {
  double term = 1.0 / a, sum = term;
  for (int n = 1; n < kMaxIterations; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::fabs(term) < std::fabs(sum) * kEps) break;
  }
  return -x + a * std::log(x) - std::lgamma(a) + std::log(sum);
}

// log Q(a, x) by the continued fraction of the upper incomplete gamma function (modified Lentz), for x >= a + 1.
double log_upper_fraction(double a, double x) {
  constexpr double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < kMaxIterations; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kEps) break;
  }
  return -x + a * std::log(x) - std::lgamma(a) + std::log(h);
}
}  // namespace

double log_chi2_sf(double x, double dof) {
  const double a = dof / 2.0, hx = x / 2.0;
  if (!(hx > 0)) return 0.0;  // P(X > 0) = 1
  if (hx < a + 1.0) return std::log1p(-std::exp(log_lower_series(a, hx)));
  return log_upper_fraction(a, hx);
}

double log_normal_sf(double z) {
  if (z < 30.0) return std::log(0.5 * std::erfc(z / std::sqrt(2.0)));
  // Mills ratio: P(N > z) = phi(z) / z * (1 - 1/z^2 + 3/z^4 - ...), relative error below 1e-7 at z = 30.
  const double z2 = z * z;
  return -0.5 * z2 - std::log(z) - 0.5 * std::log(2.0 * M_PI) + std::log1p(-1.0 / z2 + 3.0 / (z2 * z2));
}

double z_from_log_sf(double log_p) {
  if (log_p >= 0.0) return -std::numeric_limits<double>::infinity();
  // log_normal_sf is decreasing; bracket and bisect (the bracket's top: -z^2/2 dominates the tail).
  double lo = -40.0, hi = std::sqrt(-2.0 * log_p) + 40.0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, std::fabs(hi)); ++i) {
    const double mid = 0.5 * (lo + hi);
    (log_normal_sf(mid) > log_p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

namespace {
// log(1 - (1 - p)^m) from log p; below e^-30, m p to a relative 1e-13 m (and p itself may underflow a double there).
double log_any_of(double log_p, double m) {
  return log_p < -30.0 ? std::min(0.0, log_p + std::log(m)) : std::log(-std::expm1(m * std::log1p(-std::exp(log_p))));
}
// Its inverse: log p from log(1 - (1 - p)^m).
double log_one_of(double log_pm, double m) {
  return log_pm < -30.0 ? log_pm - std::log(m) : std::log(-std::expm1(std::log1p(-std::exp(log_pm)) / m));
}
}  // namespace

double multiplicity_z(double z, double m) {
  if (!(m > 1) || std::isnan(z)) return z;
  const double log_p = std::log(2.0) + log_normal_sf(std::fabs(z));  // two-sided p of one test
  const double zc = std::max(0.0, z_from_log_sf(log_any_of(log_p, m) - std::log(2.0)));
  return z < 0 ? -zc : zc;
}

double multiplicity_z_upper(double z, double m) {
  if (!(m > 1) || std::isnan(z)) return z;
  return z_from_log_sf(log_any_of(log_normal_sf(z), m));
}

double single_z_threshold(double threshold, double m, bool one_sided) {
  if (!(m > 1) || !std::isfinite(threshold)) return threshold;
  if (one_sided) return z_from_log_sf(log_one_of(log_normal_sf(threshold), m));
  return z_from_log_sf(log_one_of(std::log(2.0) + log_normal_sf(std::fabs(threshold)), m) - std::log(2.0));
}

}  // namespace moe
