// The host contract kernel's arithmetic, bit for bit: what it computes equals a plain token-by-token loop that
// decodes the weights with the reference's dequantizer, rounds every product to fp32 before adding it, sums each
// dot product in column order and each token's slots in slot order. The kernel batches each expert's tokens and
// runs many dot products side by side; none of that may change a bit.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "kernels/host/host_contract_kernel.hpp"
#include "formats/bf16.hpp"
#include "fixtures/tensor_element.hpp"
#include "reference/moe/activation.hpp"
#include "reference/moe/expert_dequant.hpp"
#include "reference/routing/routing.hpp"

namespace moe {
namespace {

// sum over c of (a[c] * w[c] rounded to fp32), in order: the volatile keeps the compiler from fusing the multiply
// into the add.
float dot_rounded_products(const float* a, const float* w, std::int64_t n) {
  float acc = 0.0f;
  for (std::int64_t c = 0; c < n; ++c) {
    volatile float prod = a[c] * w[c];
    acc = acc + prod;
  }
  return acc;
}

std::vector<float> expert(const ProblemSpec& p, const ExpertWeights& w, const QuantScheme& q, std::int64_t e,
                          std::int64_t inter, const std::vector<float>& x) {
  const std::int64_t h = p.hidden;
  std::vector<float> w13(static_cast<std::size_t>(2 * inter * h)), w2(static_cast<std::size_t>(h * inter));
  dequantize_rows(w, q, WeightMatrix::w13, e, h, inter, 0, 2 * inter, w13.data());
  dequantize_rows(w, q, WeightMatrix::w2, e, h, inter, 0, h, w2.data());
  std::vector<float> h1(static_cast<std::size_t>(2 * inter)), z(static_cast<std::size_t>(inter)), y(static_cast<std::size_t>(h));
  for (std::int64_t r = 0; r < 2 * inter; ++r) h1[r] = dot_rounded_products(x.data(), w13.data() + r * h, h);
  apply_activation(h1.data(), z.data(), inter, ActivationParams{p.activation, p.layout, p.swiglu_alpha, p.swiglu_limit, true});
  for (auto& v : z) v = round_to_bf16(v);  // the default intermediate dtype
  for (std::int64_t r = 0; r < h; ++r) y[r] = dot_rounded_products(z.data(), w2.data() + r * inter, inter);
  return y;
}

// Token by token: its top-k slots in order (each expert's output times its router weight), then the shared experts.
Tensor plain_loop(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r) {
  const std::int64_t h = p.hidden;
  Tensor out("out", p.output_dtype, {p.tokens, h});
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    std::vector<float> x(static_cast<std::size_t>(h)), acc(static_cast<std::size_t>(h), 0.0f);
    for (std::int64_t col = 0; col < h; ++col) x[col] = bf16_to_f32(c.x.span<std::uint16_t>()[t * h + col]);
    for (int j = 0; j < r.k; ++j) {
      const std::int64_t e = r.ids[t * r.k + j] - p.first_local_expert();
      if (e < 0 || e >= p.local_experts()) continue;
      std::vector<float> y = expert(p, c.routed, p.quant, e, p.local_inter(), x);
      for (std::int64_t col = 0; col < h; ++col) y[col] *= r.weights[t * r.k + j];
      for (std::int64_t col = 0; col < h; ++col) acc[col] += y[col];
    }
    for (int s = 0; s < p.n_shared; ++s) {
      const std::vector<float> y = expert(p, c.shared, p.shared_quant, s, p.local_shared_inter(), x);
      for (std::int64_t col = 0; col < h; ++col) acc[col] += y[col];
    }
    for (std::int64_t col = 0; col < h; ++col) store_element(out, t * h + col, acc[col]);
  }
  return out;
}

ProblemSpec spec(WeightFormat wf, std::int64_t tokens, int n_shared, ReduceMode reduce) {
  ProblemSpec p;
  p.hidden = 160;  // not a multiple of the kernel's 32-row blocks nor of a vector width: every tail is exercised
  p.inter = 96;
  p.experts = 8;
  p.topk = 3;
  p.tokens = tokens;
  p.n_shared = n_shared;
  p.shared_inter = n_shared ? 64 : 0;
  p.reduce = reduce;
  p.quant.weight = wf;
  p.quant.act = ActFormat::none;
  p.shared_quant = p.quant;
  p.seed = 11;
  return p;
}

}  // namespace

TEST(HostKernelArithmetic, EqualsAPlainTokenByTokenLoopBitForBit) {
  // fp8 weights with per-channel and per-block scales: their products with the inputs are not exact in fp32, so a
  // fused multiply-add anywhere would show here (bf16 times bf16 products are exact and could not). Every weight
  // format, so each decoder's scale lookup (per tensor, row, 128-column block, 32-element MX block) is pinned to the
  // reference's dequantizer; hidden 160 leaves a 32-column tail after the last 128-column fp8 block.
  for (const ProblemSpec& p : {spec(WeightFormat::fp8_channel, 7, 0, ReduceMode::fused_atomic),
                               spec(WeightFormat::fp8_block, 12, 1, ReduceMode::per_k),
                               spec(WeightFormat::fp8_tensor, 4, 0, ReduceMode::per_k),
                               spec(WeightFormat::mxfp8, 6, 1, ReduceMode::fused_atomic),
                               spec(WeightFormat::mxfp4, 9, 0, ReduceMode::separate),
                               spec(WeightFormat::fp16, 3, 0, ReduceMode::fused_atomic),
                               spec(WeightFormat::bf16, 5, 1, ReduceMode::separate)}) {
    ASSERT_FALSE(validate(p).has_value()) << validate(p)->problem;
    const Checkpoint c = generate_checkpoint(p);
    const RoutingResult r = route(p, c);
    Tensor got("out", p.output_dtype, {p.tokens, p.hidden});
    HostContractKernel k;
    k.run(p, c, r, got);
    const Tensor want = plain_loop(p, c, r);
    std::int64_t differ = 0;
    for (std::int64_t i = 0; i < got.numel(); ++i)
      if (std::memcmp(got.bytes() + 2 * i, want.bytes() + 2 * i, 2) != 0 && differ++ < 3)
        ADD_FAILURE() << "element " << i << ": kernel " << element_as_f32(got, i) << ", plain loop " << element_as_f32(want, i);
    EXPECT_EQ(differ, 0) << "of " << got.numel() << " elements, weight format " << int(p.quant.weight);
  }
}

}  // namespace moe
