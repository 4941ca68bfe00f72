#include "reference/moe/activation.hpp"

#include <gtest/gtest.h>

namespace moe {

TEST(Activation, HandComputedValues) {
  // Values from the formulas of docs/numerics.md, evaluated by hand (calculator, 17 digits).
  EXPECT_NEAR(gate_value(1.0, 2.0, {Activation::silu}), 1.4621171572600098, 1e-15);
  EXPECT_NEAR(gate_value(1.0, 1.0, {Activation::gelu_tanh}), 0.84119199060827676, 1e-15);
  EXPECT_NEAR(gate_value(1.0, 1.0, {Activation::gelu_erf}), 0.84134474606854293, 1e-15);
}

TEST(Activation, SwigluOai_ClampsGateAboveAndUpBothSides_AddsOne) {
  ActivationParams p{Activation::swiglu_oai, GateUpLayout::interleaved, 1.702f, 7.0f, true};
  // g = 8 -> 7, u = -9 -> -7: (-7 + 1) * 7 * sigmoid(1.702 * 7)
  EXPECT_NEAR(gate_value(8.0, -9.0, p), -41.999718769819907, 1e-9);
  // g below -limit is NOT clamped (only min(g, limit)); u = 0.5 inside: (1.5) * (-1) * sigmoid(-1.702)
  // alpha is held in fp32 (1.70199996...), as kernels hold it: agreement to 1e-8, not 1e-12.
  EXPECT_NEAR(gate_value(-1.0, 0.5, p), -0.23130635110076805, 1e-8);
  p.clamp = false;  // clamp_shared = false
  EXPECT_NEAR(gate_value(8.0, -9.0, p), -63.999921868569075, 1e-9);
}

TEST(Activation, LayoutsPickGateAndUpFromTheRightRows) {
  const double h[4] = {1.0, 2.0, 3.0, 4.0};
  double y[2];
  apply_activation(h, y, 2, {Activation::silu, GateUpLayout::gate_up});
  EXPECT_DOUBLE_EQ(y[0], gate_value(1.0, 3.0, {Activation::silu}));
  EXPECT_DOUBLE_EQ(y[1], gate_value(2.0, 4.0, {Activation::silu}));
  apply_activation(h, y, 2, {Activation::silu, GateUpLayout::up_gate});
  EXPECT_DOUBLE_EQ(y[0], gate_value(3.0, 1.0, {Activation::silu}));
  ActivationParams oai{Activation::swiglu_oai, GateUpLayout::interleaved};
  apply_activation(h, y, 2, oai);
  EXPECT_DOUBLE_EQ(y[0], gate_value(1.0, 2.0, oai));
  EXPECT_DOUBLE_EQ(y[1], gate_value(3.0, 4.0, oai));
}

}  // namespace moe
