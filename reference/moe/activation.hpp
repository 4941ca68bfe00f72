// Gated activations with their weight layouts (docs/numerics.md). h holds the 2I stage-1 outputs of one
// token in the stored row order; y receives I values.
#pragma once
#include <cmath>
#include <cstdint>

#include "fixtures/problem.hpp"
#include "reference/moe/act_quant.hpp"

namespace moe {

struct ActivationParams {
  Activation kind = Activation::silu;
  GateUpLayout layout = GateUpLayout::gate_up;
  float alpha = 1.702f;
  float limit = 7.0f;
  bool clamp = true;  // SwiGLU-OAI limit (a shared expert may run with it off: clamp_shared = false)
  // The contract point act_gate: the gate's activation act(g) is rounded to this dtype before it multiplies u, as
  // vLLM's silu_and_mul returns (T) of the fp32 SiLU and multiplies in the activation dtype. f32: not rounded.
  IntermediateDtype gate_round = IntermediateDtype::f32;
};

// act(g), the part of the gated activation that does not read u (SwiGLU-OAI: g * sigmoid(alpha * g), g clamped),
// rounded at the act_gate point.
template <class S>
inline S gate_part(S g, const ActivationParams& p) {
  using std::erf, std::exp, std::tanh, std::min;
  S a = S(0);
  switch (p.kind) {
    case Activation::silu: a = g / (S(1) + exp(-g)); break;
    case Activation::gelu_tanh: {
      const S c = S(0.7978845608028654);  // sqrt(2 / pi)
      a = S(0.5) * g * (S(1) + tanh(c * (g + S(0.044715) * g * g * g)));
      break;
    }
    case Activation::gelu_erf: a = S(0.5) * g * (S(1) + erf(g * S(0.7071067811865476))); break;
    case Activation::swiglu_oai:
      if (p.clamp) g = min(g, S(p.limit));
      a = g / (S(1) + exp(-S(p.alpha) * g));
      break;
  }
  if (p.gate_round != IntermediateDtype::f32) round_to_dtype(&a, 1, p.gate_round);
  return a;
}

template <class S>
inline S gate_value(S g, S u, const ActivationParams& p) {
  using std::exp, std::min, std::max;
  if (p.kind != Activation::swiglu_oai) return gate_part(g, p) * u;
  if (p.clamp) u = max(min(u, S(p.limit)), S(-p.limit));
  if (p.gate_round != IntermediateDtype::f32) return (u + S(1)) * gate_part(g, p);
  if (p.clamp) g = min(g, S(p.limit));
  return (u + S(1)) * g / (S(1) + exp(-S(p.alpha) * g));  // one rounding: the product before the division
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
