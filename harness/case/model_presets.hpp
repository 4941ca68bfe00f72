// Real model shapes (hidden, moe intermediate, experts, top-k, shared experts, routing and shipped quant of each
// model's published config), as case-file presets: `model: deepseek-v3`.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "fixtures/problem.hpp"

namespace moe {

// Fills shape, routing, activation/layout, biases and the model's shipped quant scheme into p.
bool apply_model_preset(std::string_view name, ProblemSpec& p);
std::string model_preset_names();

}  // namespace moe
