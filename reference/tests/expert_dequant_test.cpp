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
#include "formats/bf16.hpp"
#include "formats/e8m0.hpp"
#include "formats/fp8.hpp"
#include "formats/minifloat.hpp"
#include "formats/weight_format.hpp"
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

// The value docs/export.md defines for element (r, c) of expert e's w13 ([2I, H]) or w2 ([H, I]):
// the stored code decoded by its format's codec, times the scale of its block, with the block located from the
// documented grid (w13's gate and up halves blocked apart), computed here in fp64 without the engine's helpers.
double expected(const ExpertWeights& w, const QuantScheme& q, bool is13, std::int64_t e, std::int64_t inter,
                std::int64_t hidden, std::int64_t r, std::int64_t c) {
  const Tensor& el = is13 ? w.w13 : w.w2;
  const std::int64_t rows = is13 ? 2 * inter : hidden, k = is13 ? hidden : inter;
  const std::int64_t i = (e * rows + r) * k + c;
  const auto* b = reinterpret_cast<const std::uint8_t*>(el.bytes());
  double v = 0;
  switch (el.dtype()) {
    case DType::bf16: v = bf16_to_f32(el.span<std::uint16_t>()[i]); break;
    case DType::f16: v = minifloat_decode(kFp16, el.span<std::uint16_t>()[i]); break;
    case DType::e2m1x2: v = minifloat_decode(kE2M1, i % 2 ? b[i / 2] >> 4 : b[i / 2] & 0xF); break;
    default: v = minifloat_decode(*minifloat_spec_of(el.dtype()), b[i]); break;
  }
  const WeightFormatInfo& f = weight_format_info(q.weight);
  if (f.scale == ScaleKind::none) return v;
  const Tensor& sc = is13 ? w.w13_scale : w.w2_scale;
  const std::int64_t per_expert = sc.numel() / sc.dim(0);
  std::int64_t gr = 0, grows = 1;
  if (f.block_rows > 0) {
    const std::int64_t half = is13 ? inter : rows, per_half = (half + f.block_rows - 1) / f.block_rows;
    gr = r < half ? r / f.block_rows : per_half + (r - half) / f.block_rows;
    grows = is13 ? 2 * per_half : per_half;
  }
  const std::int64_t gc = f.block_k > 0 ? c / f.block_k : 0;
  const std::int64_t at = e * per_expert + gr * (per_expert / grows) + gc;
  return v * (f.scale == ScaleKind::f32 ? double(sc.span<float>()[at])
                                        : double(e8m0_decode(sc.span<std::uint8_t>()[at], q.e8m0_edges)));
}

// Every format of the table, both e4m3 flavours: row and column windows (tiles start on 128-column boundaries) give
// exactly the documented values, in fp64, and in fp32 the same rounded once.
TEST(DequantRows, EveryFormatAndWindowIsTheDocumentedValue) {
  const std::int64_t hidden = 384, inter = 160;  // 2I = 320: the last 128-row block of each half is short
  for (const WeightFormatInfo& f : kWeightFormats)
    for (Fp8Flavor flavor : {Fp8Flavor::fn, Fp8Flavor::fnuz}) {
      ProblemSpec p;
      p.hidden = hidden; p.inter = inter; p.experts = 2; p.topk = 1; p.seed = 5;
      p.quant.weight = f.format;
      p.quant.flavor = flavor;
      p.quant.e8m0_edges = E8m0Edges::triton;
      const Checkpoint ck = generate_expert_weights(p);
      for (bool is13 : {true, false}) {
        const std::int64_t rows = is13 ? 2 * inter : hidden, k = is13 ? hidden : inter;
        const WeightMatrix m = is13 ? WeightMatrix::w13 : WeightMatrix::w2;
        for (auto [c0, c1] : {std::pair<std::int64_t, std::int64_t>{0, -1}, {128, k}, {0, 128}}) {
          const std::int64_t r0 = 3, r1 = rows - 1, width = (c1 < 0 ? k : c1) - c0;
          std::vector<double> out64(std::size_t((r1 - r0) * width));
          std::vector<float> out32(out64.size());
          dequantize_rows(ck.routed, p.quant, m, 1, hidden, inter, r0, r1, out64.data(), c0, c1);
          dequantize_rows(ck.routed, p.quant, m, 1, hidden, inter, r0, r1, out32.data(), c0, c1);
          for (std::int64_t r = r0; r < r1; ++r)
            for (std::int64_t c = c0; c < c0 + width; ++c) {
              const double want = expected(ck.routed, p.quant, is13, 1, inter, hidden, r, c);
              const std::size_t at = std::size_t((r - r0) * width + (c - c0));
              ASSERT_EQ(out64[at], want) << f.name << " " << (is13 ? "w13" : "w2") << " row " << r << " col " << c;
              ASSERT_TRUE(same(out32[at], float(want))) << f.name << " row " << r << " col " << c;
            }
        }
      }
    }
}

}  // namespace
}  // namespace moe
