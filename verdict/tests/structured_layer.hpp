// A synthetic MoE layer output with the structure a kernel's errors have: each routed slot's contribution is
// weight x W2_x a, a per-expert random matrix W2_x [H, I] times the slot's bf16 intermediate a [I]. A correct kernel
// differs from the contract by summation order, which moves some intermediate elements across a bf16 rounding (one
// ulp either way) and rounds the output once more; a defect changes the intermediates or the contributions.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "fixtures/tensor.hpp"
#include "formats/bf16.hpp"
#include "reference/routing/routing.hpp"

namespace moe::test {

inline float bf16_toward_zero(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  u &= 0xFFFF0000u;
  std::memcpy(&v, &u, 4);
  return v;
}
// One bf16 ulp of v (the spacing above |v|, normal range).
inline double bf16_ulp(double v) { return std::ldexp(1.0, std::ilogb(std::fabs(v)) - 7); }

struct StructuredLayer {
  static constexpr int kExperts = 16, kK = 4;
  std::int64_t t, h, inter;
  std::vector<double> w2;         // [E, H, I]
  std::vector<float> raw;         // [t, k, I] the intermediates before their bf16 rounding
  std::vector<float> a;           // [t, k, I] the contract's intermediates (raw rounded to nearest even)
  std::vector<float> slots;       // [t, k, H] the contract's contributions weight x W2 a
  std::vector<float> ref;         // [t, H] their sum rounded to bf16
  RoutingResult routing;

  StructuredLayer(std::int64_t tokens, std::int64_t hidden, std::int64_t i, unsigned seed)
      : t(tokens), h(hidden), inter(i), routing{tokens, kK, {}, {}} {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> n(0.0, 1.0);
    w2.resize(std::size_t(kExperts * h * inter));
    for (double& w : w2) w = n(g) / std::sqrt(double(inter));
    for (std::int64_t tok = 0; tok < t; ++tok)
      for (int j = 0; j < kK; ++j) {
        routing.ids.push_back(std::int32_t((3 * tok + 5 * j) % kExperts));
        routing.weights.push_back(0.25f);
        for (std::int64_t e = 0; e < inter; ++e) {
          raw.push_back(float(n(g)));
          a.push_back(round_to_bf16(raw.back()));
        }
      }
    rebuild();
  }
  // The contract's slots and reference from the intermediates and the routing (after a test changes either).
  void rebuild() {
    const std::vector<double> c = contributions(a);
    slots.assign(c.begin(), c.end());
    ref = round_bf16(sum_slots(c));
  }
  // weight x W2_x a' for every token-slot, from intermediates a' [t, k, I].
  std::vector<double> contributions(const std::vector<float>& ap) const {
    std::vector<double> c(std::size_t(t * kK * h), 0.0);
    for (std::int64_t s = 0; s < t * kK; ++s) {
      const double* w = w2.data() + std::size_t(routing.ids[std::size_t(s)]) * std::size_t(h * inter);
      for (std::int64_t col = 0; col < h; ++col) {
        double acc = 0;
        for (std::int64_t e = 0; e < inter; ++e) acc += w[col * inter + e] * ap[std::size_t(s * inter + e)];
        c[std::size_t(s * h + col)] = routing.weights[std::size_t(s)] * acc;
      }
    }
    return c;
  }
  std::vector<double> sum_slots(const std::vector<double>& c) const {
    std::vector<double> o(std::size_t(t * h), 0.0);
    for (std::int64_t s = 0; s < t * kK; ++s)
      for (std::int64_t col = 0; col < h; ++col) o[std::size_t((s / kK) * h + col)] += c[std::size_t(s * h + col)];
    return o;
  }
  static std::vector<float> round_bf16(const std::vector<double>& v) {
    std::vector<float> r;
    for (double x : v) r.push_back(round_to_bf16(float(x)));
    return r;
  }
  // A correct kernel: a fraction p of the intermediates one bf16 ulp off, either way (a summation-order flip).
  std::vector<float> flipped(double p, unsigned seed) const {
    std::mt19937_64 g(seed * 977 + 13);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<float> ap = a;
    for (float& x : ap)
      if (u(g) < p) x = float(x + (u(g) < 0.5 ? -1 : 1) * bf16_ulp(x));
    return ap;
  }
  // The kernel's output from its contributions, rounded to bf16.
  Tensor output(const std::vector<double>& c) const {
    Tensor o("out", DType::bf16, {t, h});
    const std::vector<double> sum = sum_slots(c);
    for (std::size_t i = 0; i < sum.size(); ++i) o.span<std::uint16_t>()[i] = bf16_from_f32(float(sum[i]));
    return o;
  }
};

}  // namespace moe::test
