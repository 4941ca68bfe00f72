// dequantize_rows against the spec-pinned table decoder (formats/: every code checked against the format
// formulas): for every e4m3 code of both flavours, at every position of a row including the tails after the last
// full vector, with scales from ordinary to tiny (products in fp32's subnormal range), the fp32 result is exactly
// decode(code) * scale rounded once, NaN codes give NaN, and fp64 gives the exact product.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "formats/e8m0.hpp"
#include "formats/fp8.hpp"
#include "formats/minifloat.hpp"
#include "reference/moe/expert_dequant.hpp"

namespace moe {
namespace {

bool same(float a, float b) { return std::isnan(a) ? std::isnan(b) : std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b); }

// One expert whose w13 rows hold every code in a shifted order, per-row scales.
void check_fp8(WeightFormat wf, Fp8Flavor flavor, std::int64_t hidden) {
  QuantScheme q;
  q.weight = wf;
  q.flavor = flavor;
  const std::int64_t inter = 3;  // 6 rows
  ExpertWeights w = allocate_experts(q, 1, hidden, inter, false, "");
  auto codes = w.w13.span<std::uint8_t>();
  for (std::int64_t r = 0; r < 2 * inter; ++r)
    for (std::int64_t c = 0; c < hidden; ++c) codes[r * hidden + c] = std::uint8_t((c * 7 + r * 31) & 0xFF);
  const float row_scales[6] = {0.0123f, 3.0f, 1e-30f, 6.5e-42f, 1.0f, 2.5e-3f};
  auto sc = w.w13_scale.span<float>();
  for (std::size_t i = 0; i < sc.size(); ++i) sc[i] = row_scales[i % 6];
  const float* table = decode_table(e4m3_spec(flavor)).value;
  std::vector<float> out(std::size_t(2 * inter * hidden));
  std::vector<double> out64(out.size());
  dequantize_rows(w, q, WeightMatrix::w13, 0, hidden, inter, 0, 2 * inter, out.data());
  dequantize_rows(w, q, WeightMatrix::w13, 0, hidden, inter, 0, 2 * inter, out64.data());
  const std::int64_t half = (inter + 127) / 128, nbc = (hidden + 127) / 128;
  for (std::int64_t r = 0; r < 2 * inter; ++r)
    for (std::int64_t c = 0; c < hidden; ++c) {
      float s = sc[0];
      if (wf == WeightFormat::fp8_channel) s = sc[r];
      if (wf == WeightFormat::fp8_block) s = sc[(r < inter ? r / 128 : half + (r - inter) / 128) * nbc + c / 128];
      const float v = table[codes[r * hidden + c]];
      ASSERT_TRUE(same(out[r * hidden + c], v * s)) << "row " << r << " col " << c << " code " << int(codes[r * hidden + c]);
      const double e = double(v) * double(s);
      ASSERT_TRUE(std::isnan(e) ? std::isnan(out64[r * hidden + c]) : out64[r * hidden + c] == e);
    }
}

TEST(DequantRows, Fp8EveryCodeEveryPositionBothFlavours) {
  for (Fp8Flavor f : {Fp8Flavor::fn, Fp8Flavor::fnuz})
    for (WeightFormat wf : {WeightFormat::fp8_tensor, WeightFormat::fp8_channel, WeightFormat::fp8_block})
      for (std::int64_t hidden : {256, 269, 384, 13}) check_fp8(wf, f, hidden);
}

TEST(DequantRows, Mxfp8EveryCodeWithEdgeScales) {
  for (E8m0Edges edges : {E8m0Edges::ocp, E8m0Edges::triton}) {
    QuantScheme q;
    q.weight = WeightFormat::mxfp8;
    q.e8m0_edges = edges;
    const std::int64_t hidden = 288, inter = 2;
    ExpertWeights w = allocate_experts(q, 1, hidden, inter, false, "");
    auto codes = w.w13.span<std::uint8_t>();
    auto sc = w.w13_scale.span<std::uint8_t>();
    for (std::int64_t i = 0; i < std::int64_t(codes.size()); ++i) codes[i] = std::uint8_t((i * 13) & 0xFF);
    const std::uint8_t scale_codes[] = {0x00, 0x01, 0x7F, 0x80, 0xFE, 0x40, 0x90, 0x05, 0x77};
    for (std::size_t i = 0; i < sc.size(); ++i) sc[i] = scale_codes[i % std::size(scale_codes)];
    std::vector<float> out(codes.size());
    dequantize_rows(w, q, WeightMatrix::w13, 0, hidden, inter, 0, 2 * inter, out.data());
    const float* table = decode_table(kE4M3Fn).value;
    for (std::int64_t i = 0; i < std::int64_t(codes.size()); ++i) {
      const float s = e8m0_decode(sc[(i / hidden) * (hidden / 32) + (i % hidden) / 32], edges);
      ASSERT_TRUE(same(out[i], table[codes[i]] * s)) << i << " code " << int(codes[i]);
    }
  }
}

}  // namespace
}  // namespace moe
