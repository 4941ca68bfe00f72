// Gated activations with their weight layouts (docs/numerics.md). h holds the 2I stage-1 outputs of one
// token in the stored row order; y receives I values.
#pragma once
#include <cmath>
#include <cstdint>

#include "fixtures/problem.hpp"

namespace moe {

struct ActivationParams {
  Activation kind = Activation::silu;
  GateUpLayout layout = GateUpLayout::gate_up;
  float alpha = 1.702f;
  float limit = 7.0f;
  bool clamp = true;  // SwiGLU-OAI limit (a shared expert may run with it off: clamp_shared = false)
};

template <class S>
inline S gate_value(S g, S u, const ActivationParams& p) {
  using std::erf, std::exp, std::tanh, std::sqrt, std::min, std::max;
  switch (p.kind) {
    case Activation::silu: return g / (S(1) + exp(-g)) * u;
    case Activation::gelu_tanh: {
      const S c = S(0.7978845608028654);  // sqrt(2 / pi)
      return S(0.5) * g * (S(1) + tanh(c * (g + S(0.044715) * g * g * g))) * u;
    }
    case Activation::gelu_erf: return S(0.5) * g * (S(1) + erf(g * S(0.7071067811865476))) * u;
    case Activation::swiglu_oai: {
      if (p.clamp) {
        g = min(g, S(p.limit));
        u = max(min(u, S(p.limit)), S(-p.limit));
      }
      return (u + S(1)) * g / (S(1) + exp(-S(p.alpha) * g));
    }
  }
  return S(0);
}

template <class S>
inline void apply_activation(const S* h, S* y, std::int64_t inter, const ActivationParams& p) {
  for (std::int64_t i = 0; i < inter; ++i) {
    S g, u;
    switch (p.layout) {
      case GateUpLayout::gate_up: g = h[i]; u = h[inter + i]; break;
      case GateUpLayout::up_gate: u = h[i]; g = h[inter + i]; break;
      default: g = h[2 * i]; u = h[2 * i + 1]; break;
    }
    y[i] = gate_value(g, u, p);
  }
}

}  // namespace moe
