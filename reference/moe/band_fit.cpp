#include "reference/moe/band_fit.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <fmt/format.h>

namespace moe {
namespace {

// The normal equations of the columns, each scaled to unit norm: G = B'B and f = B'e (a column's coefficient is
// then in units of its norm). A small ridge keeps collinear columns (two amaxes of one group) solvable.
struct Normal {
  Eigen::MatrixXd g;
  Eigen::VectorXd f, norm;
};
Eigen::LDLT<Eigen::MatrixXd> factor(const Normal& n, const std::vector<int>& idx) {
  const Eigen::Index k = Eigen::Index(idx.size());
  Eigen::MatrixXd g(k, k);
  for (Eigen::Index a = 0; a < k; ++a)
    for (Eigen::Index b = 0; b < k; ++b) g(a, b) = n.g(idx[std::size_t(a)], idx[std::size_t(b)]);
  g.diagonal().array() += 1e-10;
  return g.ldlt();
}
Eigen::VectorXd solve(const Normal& n, const std::vector<int>& idx, const Eigen::VectorXd& rhs) {
  return factor(n, idx).solve(rhs);
}

// Least squares on the columns idx with |c_j| <= bound_j (in the scaled units): a column whose free coefficient
// exceeds its bound is held at the bound (its sign kept) and the others are fitted again, until every free one is
// inside (an active-set approximation of the box-constrained problem: a held column is never released).
Eigen::VectorXd bounded_fit(const Normal& n, const std::vector<double>& bound, const std::vector<int>& idx) {
  Eigen::VectorXd c = Eigen::VectorXd::Zero(Eigen::Index(idx.size()));
  std::vector<char> held(idx.size(), 0);
  for (int round = 0; round < 16; ++round) {
    std::vector<int> free, where;
    for (std::size_t i = 0; i < idx.size(); ++i)
      if (!held[i]) free.push_back(idx[i]), where.push_back(int(i));
    if (free.empty()) break;
    Eigen::VectorXd rhs(Eigen::Index(free.size()));
    for (std::size_t a = 0; a < free.size(); ++a) {
      rhs[Eigen::Index(a)] = n.f[free[a]];
      for (std::size_t i = 0; i < idx.size(); ++i)
        if (held[i]) rhs[Eigen::Index(a)] -= n.g(free[a], idx[i]) * c[Eigen::Index(i)];
    }
    const Eigen::VectorXd cf = solve(n, free, rhs);
    bool over = false;
    for (std::size_t a = 0; a < free.size(); ++a) {
      const int j = where[a];
      const double lim = bound[std::size_t(idx[std::size_t(j)])];
      c[j] = cf[Eigen::Index(a)];
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
  Normal n;
  n.norm = cols.b.colwise().norm().transpose();
  const Eigen::MatrixXd bs = cols.b * n.norm.cwiseInverse().asDiagonal();
  n.g.noalias() = bs.transpose() * bs;
  n.f.noalias() = bs.transpose() * e;
  std::vector<double> bound(static_cast<std::size_t>(m));
  std::vector<int> base;
  for (int j = 0; j < m; ++j) {
    bound[std::size_t(j)] = cols.col[std::size_t(j)].bound * n.norm[j];
    if (cols.col[std::size_t(j)].group < 0) base.push_back(j);
  }
  // The scale scenarios: per group, the one that removes the most of what the other columns leave (each judged
  // against the flip and linear columns alone), if it removes more than the noise: a scale the kernel did not take
  // explains nothing real, and two of one group are one scale.
  std::vector<int> chosen = base;
  {
    Eigen::VectorXd fb(Eigen::Index(base.size()));
    for (std::size_t a = 0; a < base.size(); ++a) fb[Eigen::Index(a)] = n.f[base[a]];
    const Eigen::LDLT<Eigen::MatrixXd> gb = factor(n, base);
    const Eigen::VectorXd cb = base.empty() ? Eigen::VectorXd() : Eigen::VectorXd(gb.solve(fb));
    std::vector<std::pair<double, int>> best;  // per group: gain, column
    for (int j = 0; j < m; ++j) {
      const int g = cols.col[std::size_t(j)].group;
      if (g < 0) continue;
      Eigen::VectorXd gs(Eigen::Index(base.size()));
      for (std::size_t a = 0; a < base.size(); ++a) gs[Eigen::Index(a)] = n.g(base[a], j);
      const Eigen::VectorXd ps = base.empty() ? Eigen::VectorXd() : Eigen::VectorXd(gb.solve(gs));
      const double rs = n.f[j] - (base.empty() ? 0.0 : cb.dot(gs)), ss = 1.0 - (base.empty() ? 0.0 : ps.dot(gs));
      const double gain = ss > 1e-9 ? rs * rs / ss : 0.0;
      if (std::size_t(g) >= best.size()) best.resize(std::size_t(g) + 1, {x.noise * x.noise, -1});
      if (gain > best[std::size_t(g)].first) best[std::size_t(g)] = {gain, j};
    }
    for (const auto& [gain, j] : best)
      if (j >= 0) chosen.push_back(j);
  }
  const Eigen::VectorXd c = chosen.empty() ? Eigen::VectorXd() : bounded_fit(n, bound, chosen);
  Eigen::VectorXd res = e;
  std::vector<std::pair<double, std::size_t>> size;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const int j = chosen[i];
    const double ci = c[Eigen::Index(i)] / n.norm[j];  // in the column's own units
    res -= ci * cols.b.col(j);
    const double steps = ci * kExplainMaxSteps / cols.col[std::size_t(j)].bound;  // one column, one unit
    x.max_coef = std::max(x.max_coef, std::fabs(steps));
    if (cols.col[std::size_t(j)].group >= 0) ++x.scale_columns;
    else ++x.flip_columns;
    if (std::fabs(steps) > 0.25) size.push_back({std::fabs(c[Eigen::Index(i)]), i});
  }
  std::sort(size.begin(), size.end(), [](auto a, auto b) { return a.first > b.first; });
  for (std::size_t i = 0; i < std::min<std::size_t>(4, size.size()); ++i) {
    const std::size_t k = size[i].second;
    const int j = chosen[k];
    x.used.push_back(fmt::format("{}: c {:.3f}", cols.col[std::size_t(j)].what,
                                 c[Eigen::Index(k)] / n.norm[j] * kExplainMaxSteps / cols.col[std::size_t(j)].bound));
  }
  x.ratio = x.noise > 0 ? res.norm() / x.noise : (res.norm() > 0 ? HUGE_VAL : 0.0);
  x.explained = x.ratio <= kExplainMaxRatio;
  const double mh = double(chosen.size()) / double(std::max<Eigen::Index>(1, e.size()));
  x.decisive = mh < 1 && x.noise > 0 && std::sqrt(1 - mh) * x.error_norm / x.noise > kExplainMaxRatio;
  return x;
}

}  // namespace moe
