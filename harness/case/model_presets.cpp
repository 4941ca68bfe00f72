#include "harness/case/model_presets.hpp"

#include <array>

namespace moe {
namespace {

struct Preset {
  std::string_view name;
  std::int64_t hidden, inter, experts;
  int topk, n_shared;
  std::int64_t shared_inter;
  RoutingSpec routing;
  Activation activation;
  bool biases;
  WeightFormat weight;
  ActFormat act;
};

const RoutingSpec kSoftmax{RoutingKind::softmax_topk, true, 1, 1, 1.0f};

// H, I (moe intermediate), E, top-k, shared experts and their intermediate; routing; activation; quant as shipped.
constexpr auto presets() {
  return std::array<Preset, 11>{{
      {"deepseek-v3", 7168, 2048, 256, 8, 1, 2048, {RoutingKind::grouped_sigmoid, true, 8, 4, 2.5f}, Activation::silu, false, WeightFormat::fp8_block, ActFormat::fp8_group128},
      {"kimi-k2", 7168, 2048, 384, 8, 1, 2048, {RoutingKind::grouped_sigmoid, true, 1, 1, 2.827f}, Activation::silu, false, WeightFormat::fp8_block, ActFormat::fp8_group128},
      {"qwen3-30b-a3b", 2048, 768, 128, 8, 0, 0, {RoutingKind::softmax_topk, true, 1, 1, 1.0f}, Activation::silu, false, WeightFormat::bf16, ActFormat::none},
      {"qwen3-235b-a22b", 4096, 1536, 128, 8, 0, 0, {RoutingKind::softmax_topk, true, 1, 1, 1.0f}, Activation::silu, false, WeightFormat::bf16, ActFormat::none},
      {"qwen3-next-80b-a3b", 2048, 512, 512, 10, 1, 512, {RoutingKind::softmax_topk, true, 1, 1, 1.0f}, Activation::silu, false, WeightFormat::bf16, ActFormat::none},
      {"qwen3.5-35b-a3b", 2048, 512, 256, 8, 1, 512, {RoutingKind::softmax_topk, true, 1, 1, 1.0f}, Activation::silu, false, WeightFormat::bf16, ActFormat::none},
      {"gpt-oss-120b", 2880, 2880, 128, 4, 0, 0, {RoutingKind::softmax_topk, true, 1, 1, 1.0f}, Activation::swiglu_oai, true, WeightFormat::mxfp4, ActFormat::none},
      {"gpt-oss-20b", 2880, 2880, 32, 4, 0, 0, {RoutingKind::softmax_topk, true, 1, 1, 1.0f}, Activation::swiglu_oai, true, WeightFormat::mxfp4, ActFormat::none},
      {"mixtral-8x7b", 4096, 14336, 8, 2, 0, 0, {RoutingKind::softmax_topk, true, 1, 1, 1.0f}, Activation::silu, false, WeightFormat::bf16, ActFormat::none},
      {"llama4-scout", 5120, 8192, 16, 1, 1, 8192, {RoutingKind::sigmoid_top1, false, 1, 1, 1.0f}, Activation::silu, false, WeightFormat::bf16, ActFormat::none},
      {"llama4-maverick", 5120, 8192, 128, 1, 1, 8192, {RoutingKind::sigmoid_top1, false, 1, 1, 1.0f}, Activation::silu, false, WeightFormat::bf16, ActFormat::none},
  }};
}

}  // namespace

bool apply_model_preset(std::string_view name, ProblemSpec& p) {
  for (const Preset& m : presets()) {
    if (m.name != name) continue;
    p.hidden = m.hidden; p.inter = m.inter; p.experts = m.experts; p.topk = m.topk;
    p.n_shared = m.n_shared; p.shared_inter = m.shared_inter; p.routing = m.routing;
    p.activation = m.activation;
    p.layout = m.activation == Activation::swiglu_oai ? GateUpLayout::interleaved : GateUpLayout::gate_up;
    p.biases = m.biases;
    p.quant.weight = m.weight; p.quant.act = m.act;
    p.shared_quant.weight = m.weight; p.shared_quant.act = m.act;
    p.router_weight_on = m.routing.kind == RoutingKind::sigmoid_top1 ? RouterWeightOn::input : RouterWeightOn::output;
    return true;
  }
  return false;
}

std::string model_preset_names() {
  std::string s;
  for (const Preset& m : presets()) s += (s.empty() ? "" : ", ") + std::string(m.name);
  return s;
}

}  // namespace moe
