#include "reference/moe/band_fit.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <fmt/format.h>

namespace moe {
namespace {

Eigen::MatrixXd columns_of(const Eigen::MatrixXd& b, const std::vector<int>& idx) {
  Eigen::MatrixXd m(b.rows(), Eigen::Index(idx.size()));
  for (std::size_t i = 0; i < idx.size(); ++i) m.col(Eigen::Index(i)) = b.col(idx[i]);
  return m;
}

// Least squares of e on the columns idx of b with |c_j| <= bound_j: a column whose free coefficient exceeds its
// bound is held at the bound (its sign kept) and the others are fitted again, until every free one is inside.
// (An active-set approximation of the box-constrained problem: a held column is never released.)
Eigen::VectorXd bounded_fit(const Eigen::MatrixXd& b, const std::vector<double>& bound, const std::vector<int>& idx,
                            const Eigen::VectorXd& e) {
  Eigen::VectorXd c = Eigen::VectorXd::Zero(Eigen::Index(idx.size()));
  std::vector<char> held(idx.size(), 0);
  for (int round = 0; round < 16; ++round) {
    Eigen::VectorXd target = e;
    std::vector<int> free, where;
    for (std::size_t i = 0; i < idx.size(); ++i) {
      if (held[i]) target -= c[Eigen::Index(i)] * b.col(idx[i]);
      else free.push_back(idx[i]), where.push_back(int(i));
    }
    if (free.empty()) break;
    const Eigen::VectorXd cf = columns_of(b, free).colPivHouseholderQr().solve(target);
    bool over = false;
    for (std::size_t i = 0; i < free.size(); ++i) {
      const int j = where[i];
      const double lim = bound[std::size_t(idx[std::size_t(j)])];
      c[j] = cf[Eigen::Index(i)];
      if (std::fabs(c[j]) > lim) c[j] = std::copysign(lim, c[j]), held[std::size_t(j)] = 1, over = true;
    }
    if (!over) break;
  }
  return c;
}

}  // namespace

BandExplanation fit_band_error(const BandColumns& cols, const Eigen::VectorXd& e) {
  BandExplanation x;
  x.tested = true;
  x.hidden = e.size();
  x.error_norm = e.norm();
  x.noise = std::sqrt(cols.noise_var.sum());
  const int m = int(cols.b.cols());
  std::vector<double> bound(static_cast<std::size_t>(m));
  std::vector<int> base;
  for (int j = 0; j < m; ++j) {
    bound[std::size_t(j)] = cols.col[std::size_t(j)].bound;
    if (cols.col[std::size_t(j)].group < 0) base.push_back(j);
  }
  // The scale scenarios: per group, the one that removes the most of what the other columns leave, if it removes
  // more than the noise (a scale the kernel did not take explains nothing real; two of one group are one scale).
  std::vector<int> chosen = base;
  {
    const Eigen::MatrixXd bb = columns_of(cols.b, base);
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr;
    if (!base.empty()) qr.compute(bb);
    auto off_base = [&](const Eigen::VectorXd& v) -> Eigen::VectorXd {
      return base.empty() ? v : Eigen::VectorXd(v - bb * qr.solve(v));
    };
    Eigen::VectorXd r = off_base(e);
    std::vector<int> groups;
    for (int j = 0; j < m; ++j)
      if (cols.col[std::size_t(j)].group >= 0) groups.push_back(cols.col[std::size_t(j)].group);
    std::sort(groups.begin(), groups.end());
    groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
    for (int g : groups) {
      double best_gain = x.noise * x.noise;
      int best = -1;
      Eigen::VectorXd best_dir;
      for (int j = 0; j < m; ++j) {
        if (cols.col[std::size_t(j)].group != g) continue;
        const Eigen::VectorXd s = off_base(cols.b.col(j));
        const double ss = s.squaredNorm();
        if (!(ss > 0)) continue;
        const double gain = std::pow(r.dot(s), 2) / ss;
        if (gain > best_gain) best_gain = gain, best = j, best_dir = s / std::sqrt(ss);
      }
      if (best < 0) continue;
      chosen.push_back(best);
      r -= r.dot(best_dir) * best_dir;
    }
  }
  const Eigen::VectorXd c = chosen.empty() ? Eigen::VectorXd() : bounded_fit(cols.b, bound, chosen, e);
  Eigen::VectorXd res = e;
  std::vector<std::pair<double, std::size_t>> size;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const int j = chosen[i];
    res -= c[Eigen::Index(i)] * cols.b.col(j);
    const double steps = c[Eigen::Index(i)] * kExplainMaxSteps / bound[std::size_t(j)];  // in units of the column
    x.max_coef = std::max(x.max_coef, std::fabs(steps));
    if (cols.col[std::size_t(j)].group >= 0) ++x.scale_columns;
    else ++x.flip_columns;
    if (std::fabs(steps) > 0.25) size.push_back({std::fabs(c[Eigen::Index(i)]) * cols.b.col(j).norm(), i});
  }
  std::sort(size.begin(), size.end(), [](auto a, auto b) { return a.first > b.first; });
  for (std::size_t i = 0; i < std::min<std::size_t>(4, size.size()); ++i) {
    const std::size_t k = size[i].second;
    const int j = chosen[k];
    x.used.push_back(fmt::format("{}: c {:.3f}", cols.col[std::size_t(j)].what,
                                 c[Eigen::Index(k)] * kExplainMaxSteps / bound[std::size_t(j)]));
  }
  x.ratio = x.noise > 0 ? res.norm() / x.noise : (res.norm() > 0 ? HUGE_VAL : 0.0);
  x.explained = x.ratio <= kExplainMaxRatio;
  const double mh = double(chosen.size()) / double(std::max<Eigen::Index>(1, e.size()));
  x.decisive = mh < 1 && x.noise > 0 && std::sqrt(1 - mh) * x.error_norm / x.noise > kExplainMaxRatio;
  return x;
}

}  // namespace moe
