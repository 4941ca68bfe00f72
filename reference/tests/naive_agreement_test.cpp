// The engine (fp64 validation mode) against the independent naive fp64 implementation, per token to 1e-6
// relative, on small problems of every routing x activation x quant scheme the reference supports, and of every
// scheme under every combination of the rounding points; the fp32 engine within a sanity bound of the same.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/rounding_contract.hpp"
#include "reference/moe/reference_moe.hpp"
#include "reference/naive/naive_moe.hpp"

namespace moe {
namespace {

struct Scheme { const char* name; QuantScheme q; DType io; };
std::vector<Scheme> schemes() {
  auto qs = [](WeightFormat w, ActFormat a, Fp8Flavor f = Fp8Flavor::fn, float qmax = 0, bool pow2 = false,
               MxScaleMode m = MxScaleMode::rceil, E8m0Edges edges = E8m0Edges::ocp) {
    QuantScheme q;
    q.weight = w; q.act = a; q.flavor = f; q.act_qmax = qmax; q.act_scale_pow2 = pow2; q.mx_mode = m; q.e8m0_edges = edges;
    return q;
  };
  return {
      {"bf16", qs(WeightFormat::bf16, ActFormat::none), DType::bf16},
      {"fp16", qs(WeightFormat::fp16, ActFormat::none), DType::f16},
      {"fp8tensor_fn_token", qs(WeightFormat::fp8_tensor, ActFormat::fp8_token), DType::bf16},
      {"fp8channel_fnuz_token224", qs(WeightFormat::fp8_channel, ActFormat::fp8_token, Fp8Flavor::fnuz, 224.0f), DType::bf16},
      {"fp8block_fn_group128_ue8m0", qs(WeightFormat::fp8_block, ActFormat::fp8_group128, Fp8Flavor::fn, 0, true), DType::bf16},
      {"fp8block_fnuz_group128", qs(WeightFormat::fp8_block, ActFormat::fp8_group128, Fp8Flavor::fnuz), DType::bf16},
      {"mxfp8_floor", qs(WeightFormat::mxfp8, ActFormat::mxfp8, Fp8Flavor::fn, 0, false, MxScaleMode::floor), DType::bf16},
      {"mxfp4_a16_even", qs(WeightFormat::mxfp4, ActFormat::none, Fp8Flavor::fn, 0, false, MxScaleMode::even), DType::bf16},
      {"mxfp4_a8token_rceil", qs(WeightFormat::mxfp4, ActFormat::fp8_token), DType::bf16},
      {"mxfp4_mxfp8_triton", qs(WeightFormat::mxfp4, ActFormat::mxfp8, Fp8Flavor::fn, 0, false, MxScaleMode::rceil, E8m0Edges::triton), DType::bf16},
  };
}

struct Routing { const char* name; RoutingSpec r; int k; RouterWeightOn on; };
std::vector<Routing> routings() {
  return {
      {"softmax_renorm", {RoutingKind::softmax_topk, true}, 2, RouterWeightOn::output},
      {"softmax_plain", {RoutingKind::softmax_topk, false}, 3, RouterWeightOn::output},
      {"grouped", {RoutingKind::grouped_sigmoid, true, 4, 2, 2.5f}, 3, RouterWeightOn::output},
      {"llama4_top1", {RoutingKind::sigmoid_top1, false}, 1, RouterWeightOn::input},
      {"precomputed", {RoutingKind::precomputed, false}, 2, RouterWeightOn::output},
  };
}

struct Act { const char* name; Activation a; GateUpLayout l; bool biases; };
std::vector<Act> activations() {
  return {{"silu_gate_up", Activation::silu, GateUpLayout::gate_up, false},
          {"silu_up_gate", Activation::silu, GateUpLayout::up_gate, false},
          {"gelu_tanh", Activation::gelu_tanh, GateUpLayout::gate_up, false},
          {"gelu_erf", Activation::gelu_erf, GateUpLayout::up_gate, true},
          {"swiglu_oai_bias", Activation::swiglu_oai, GateUpLayout::interleaved, true}};
}

struct Combo { std::string name; ProblemSpec spec; };
void PrintTo(const Combo& c, std::ostream* os) { *os << c.name; }

std::vector<Combo> combos() {
  std::vector<Combo> out;
  for (auto& sc : schemes())
    for (auto& ro : routings())
      for (auto& ac : activations()) {
        ProblemSpec s;
        s.hidden = 96; s.inter = 160; s.experts = 8; s.topk = ro.k; s.tokens = 5;
        s.routing = ro.r; s.router_weight_on = ro.on;
        s.activation = ac.a; s.layout = ac.l; s.biases = ac.biases;
        s.quant = sc.q; s.input_dtype = sc.io; s.output_dtype = sc.io;
        s.intermediate = sc.io == DType::f16 ? IntermediateDtype::f16 : IntermediateDtype::bf16;
        s.seed = 11;
        if (validate(s)) continue;  // not a valid contract (e.g. 128x128 blocks on an interleaved layout)
        out.push_back({std::string(sc.name) + "__" + ro.name + "__" + ac.name, s});
      }
  // Shared experts, fused and on a separate path (two roundings to the output dtype), on EP rank 0 (it adds them).
  for (auto& sc : schemes())
    for (SharedPath path : {SharedPath::fused, SharedPath::separate}) {
      ProblemSpec s;
      s.hidden = 96; s.inter = 160; s.experts = 8; s.topk = 2; s.tokens = 5; s.ep = 2;
      s.n_shared = 1; s.shared_inter = 64; s.shared_path = path;
      s.quant = s.shared_quant = sc.q; s.input_dtype = sc.io; s.output_dtype = sc.io;
      s.intermediate = sc.io == DType::f16 ? IntermediateDtype::f16 : IntermediateDtype::bf16;
      s.seed = 13;
      if (validate(s)) continue;
      out.push_back({std::string(sc.name) + "__shared_" + std::string(name(path)) + "_ep2", s});
    }
  return out;
}

// Every combination of the contract's gate_up, slot and reduce points (f32, bf16, f16) on a shared-expert case,
// fused and separate, for every scheme; the activation, act_gate and output points rotate through their dtypes, and
// the fp8 quantizers' scale form (token/group_scale_form) and code op (token/group_scale) through their values.
std::vector<Combo> rounding_combos() {
  std::vector<Combo> out;
  constexpr IntermediateDtype kD[] = {IntermediateDtype::f32, IntermediateDtype::bf16, IntermediateDtype::f16};
  constexpr DType kOut[] = {DType::bf16, DType::f16, DType::f32};
  int n = 0;
  for (auto& sc : schemes())
    for (IntermediateDtype gu : kD)
      for (IntermediateDtype sl : kD)
        for (IntermediateDtype rd : kD)
          for (SharedPath path : {SharedPath::fused, SharedPath::separate}) {
            ProblemSpec s;
            s.hidden = 96; s.inter = 160; s.experts = 8; s.topk = 3; s.tokens = 3;
            s.n_shared = 1; s.shared_inter = 64; s.shared_path = path;
            s.quant = s.shared_quant = sc.q; s.input_dtype = sc.io;
            s.gate_up_dtype = gu; s.slot_dtype = sl; s.reduce_dtype = rd;
            s.intermediate = kD[(n + 1) % 3];
            s.act_gate_dtype = kD[(n + 2) % 3];
            s.output_dtype = kOut[n % 3];
            RoundingContract q;
            q.token_scale_form = q.group_scale_form = (n / 2) % 2 ? ActScaleForm::qmax_reciprocal : ActScaleForm::divide;
            q.token_scale = q.group_scale = (n / 4) % 2 ? ActScaleOp::reciprocal : ActScaleOp::divide;
            s = with_contract(s, q);
            s.seed = 17 + n++;
            if (validate(s)) continue;
            out.push_back({std::string(sc.name) + "__" + contract_text(s), s});
          }
  return out;
}

double token_rel(const float* a, const double* b, std::int64_t h) {
  double num = 0, den = 0;
  for (std::int64_t i = 0; i < h; ++i) { num += (a[i] - b[i]) * (a[i] - b[i]); den += b[i] * b[i]; }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

class NaiveAgreement : public ::testing::TestWithParam<Combo> {};

TEST_P(NaiveAgreement, EngineMatchesNaivePerToken) {
  const ProblemSpec& s = GetParam().spec;
  const Checkpoint c = generate_checkpoint(s);
  const auto nr = naive::route(s, c);
  const auto rr = route(s, c);
  ASSERT_EQ(std::vector<int>(rr.ids.begin(), rr.ids.end()), nr.ids) << "routing ids";
  for (std::size_t i = 0; i < nr.weights.size(); ++i) EXPECT_NEAR(rr.weights[i], nr.weights[i], 1e-6 * std::fabs(nr.weights[i]));
  for (bool contract : {true, false}) {
    const auto want = naive::moe(s, c, nr, contract);
    const auto kind = contract ? ReferenceKind::contract : ReferenceKind::ideal;
    const auto got64 = reference_moe(s, c, rr, kind, Precision::fp64);
    const auto got32 = reference_moe(s, c, rr, kind, Precision::fp32);
    double norm = 0;
    for (double v : want) norm += v * v;
    ASSERT_GT(norm, 0.0) << "degenerate problem: all-zero output proves nothing";
    for (std::int64_t t = 0; t < s.tokens; ++t) {
      EXPECT_LE(token_rel(got64.data() + t * s.hidden, want.data() + t * s.hidden, s.hidden), 1e-6)
          << (contract ? "contract" : "ideal") << " fp64, token " << t;
      EXPECT_LE(token_rel(got32.data() + t * s.hidden, want.data() + t * s.hidden, s.hidden), 2e-2)
          << (contract ? "contract" : "ideal") << " fp32, token " << t;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllCombos, NaiveAgreement, ::testing::ValuesIn(combos()),
                         [](const auto& info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(RoundingPoints, NaiveAgreement, ::testing::ValuesIn(rounding_combos()), [](const auto& info) {
  std::string n = info.param.name;
  for (char& ch : n)
    if (ch == '=' || ch == ',') ch = '_';
  return n;
});

TEST(NaiveAgreementCoverage, EveryRoutingActivationAndSchemeIsExercised) {
  const auto all = combos();
  for (auto& sc : schemes()) {
    bool seen = false;
    for (auto& c : all) seen |= c.name.rfind(std::string(sc.name) + "__", 0) == 0;
    EXPECT_TRUE(seen) << sc.name;
  }
  EXPECT_GE(all.size(), 200u);
}

TEST(NaiveAgreementCoverage, TheQuantizerScaleFormAndCodeOpRotate) {
  int token_form = 0, group_form = 0, token_aiter = 0, group_aiter = 0;
  for (auto& c : rounding_combos()) {
    const auto has = [&](const char* t) { return c.name.find(t) != std::string::npos; };
    token_form += has("token_scale_form=qmax_reciprocal");
    group_form += has("group_scale_form=qmax_reciprocal");
    token_aiter += has("token_scale_form=qmax_reciprocal,token_scale=reciprocal");
    group_aiter += has("group_scale_form=qmax_reciprocal,group_scale=reciprocal");
  }
  EXPECT_GT(token_form, token_aiter);
  EXPECT_GT(group_form, group_aiter);
  EXPECT_GT(token_aiter, 0);
  EXPECT_GT(group_aiter, 0);
}

}  // namespace
}  // namespace moe
