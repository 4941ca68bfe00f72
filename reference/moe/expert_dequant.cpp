#include "reference/moe/expert_dequant.hpp"

#include <vector>

#include "reference/formats/bf16.hpp"
#include "reference/formats/e2m1.hpp"
#include "reference/formats/e8m0.hpp"
#include "reference/formats/fp8.hpp"
#include "reference/formats/minifloat.hpp"
#include "reference/quant/fp8_quant.hpp"
#include "reference/quant/mx_quant.hpp"

namespace moe {
namespace {
const std::vector<float>& fp16_table() {
  static const std::vector<float> t = [] {
    std::vector<float> v(65536);
    for (std::uint32_t c = 0; c < 65536; ++c) v[c] = minifloat_decode(kFp16, c);
    return v;
  }();
  return t;
}
}  // namespace

template <class S>
void dequantize_rows(const ExpertWeights& w, const QuantScheme& q, WeightMatrix which, std::int64_t e,
                     std::int64_t hidden, std::int64_t inter, std::int64_t r0, std::int64_t r1, S* out) {
  const bool is13 = which == WeightMatrix::w13;
  const Tensor& el = is13 ? w.w13 : w.w2;
  const Tensor& sc = is13 ? w.w13_scale : w.w2_scale;
  const std::int64_t rows = is13 ? 2 * inter : hidden, k = is13 ? hidden : inter;
  const std::int64_t n = r1 - r0;
  switch (q.weight) {
    case WeightFormat::bf16: {
      const auto* p = el.span<std::uint16_t>().data() + (e * rows + r0) * k;
      for (std::int64_t i = 0; i < n * k; ++i) out[i] = S(bf16_to_f32(p[i]));
      return;
    }
    case WeightFormat::fp16: {
      const auto* p = el.span<std::uint16_t>().data() + (e * rows + r0) * k;
      const float* t = fp16_table().data();
      for (std::int64_t i = 0; i < n * k; ++i) out[i] = S(t[p[i]]);
      return;
    }
    case WeightFormat::fp8_tensor: case WeightFormat::fp8_channel: case WeightFormat::fp8_block: {
      const float* t = decode_table(e4m3_spec(q.flavor)).value;
      const auto* p = el.span<std::uint8_t>().data() + (e * rows + r0) * k;
      const float* s = sc.span<float>().data();
      const std::int64_t per_expert = sc.numel() / sc.dim(0);
      s += e * per_expert;
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t r = r0 + i;
        const std::uint8_t* row = p + i * k;
        S* o = out + i * k;
        if (q.weight == WeightFormat::fp8_block) {
          // w13 blocks its gate and up halves separately: [2 * ceil(I/128), ceil(H/128)].
          std::int64_t br;
          if (is13) {
            const std::int64_t half = inter, per_half = ceil_div(half, 128);
            br = r < half ? r / 128 : per_half + (r - half) / 128;
          } else {
            br = r / 128;
          }
          const float* srow = s + br * ceil_div(k, 128);
          for (std::int64_t c0 = 0; c0 < k; c0 += 128) {
            const float bs = srow[c0 / 128];
            const std::int64_t c1 = std::min(k, c0 + 128);
            for (std::int64_t c = c0; c < c1; ++c) o[c] = S(t[row[c]]) * S(bs);
          }
        } else {
          const float rs = q.weight == WeightFormat::fp8_tensor ? s[0] : s[r];
          for (std::int64_t c = 0; c < k; ++c) o[c] = S(t[row[c]]) * S(rs);
        }
      }
      return;
    }
    case WeightFormat::mxfp8: case WeightFormat::mxfp4: {
      const bool fp4 = q.weight == WeightFormat::mxfp4;
      const float* t = decode_table(fp4 ? kE2M1 : kE4M3Fn).value;
      const std::int64_t row_bytes = fp4 ? k / 2 : k, nb = k / kMxBlock;
      const auto* p = el.span<std::uint8_t>().data() + (e * rows + r0) * row_bytes;
      const auto* s = sc.span<std::uint8_t>().data() + (e * rows + r0) * nb;
      for (std::int64_t i = 0; i < n; ++i) {
        S* o = out + i * k;
        for (std::int64_t b = 0; b < nb; ++b) {
          const float bs = e8m0_decode(s[i * nb + b], q.e8m0_edges);
          if (fp4) {
            const std::uint8_t* src = p + i * row_bytes + b * (kMxBlock / 2);
            for (int j = 0; j < kMxBlock / 2; ++j) {
              o[b * kMxBlock + 2 * j] = S(t[e2m1_unpack(src[j], 0)]) * S(bs);
              o[b * kMxBlock + 2 * j + 1] = S(t[e2m1_unpack(src[j], 1)]) * S(bs);
            }
          } else {
            const std::uint8_t* src = p + i * row_bytes + b * kMxBlock;
            for (int j = 0; j < kMxBlock; ++j) o[b * kMxBlock + j] = S(t[src[j]]) * S(bs);
          }
        }
      }
      return;
    }
  }
}

template void dequantize_rows<float>(const ExpertWeights&, const QuantScheme&, WeightMatrix, std::int64_t,
                                     std::int64_t, std::int64_t, std::int64_t, std::int64_t, float*);
template void dequantize_rows<double>(const ExpertWeights&, const QuantScheme&, WeightMatrix, std::int64_t,
                                      std::int64_t, std::int64_t, std::int64_t, std::int64_t, double*);

}  // namespace moe
