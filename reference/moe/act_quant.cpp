#include "reference/moe/act_quant.hpp"

#include <vector>

#include "formats/bf16.hpp"
#include "formats/e8m0.hpp"
#include "formats/fp16.hpp"
#include "formats/fp8.hpp"
#include "formats/fp8_quant.hpp"
#include "formats/mx_quant.hpp"
#include "formats/omp_errors.hpp"
#include "reference/moe/large_buffer.hpp"

namespace moe {

template <class S>
void fake_quantize_activation_rows(S* rows, std::int64_t n, std::int64_t k, const QuantScheme& q) {
  if (q.act == ActFormat::none || n == 0) return;
  // Per-thread scratch kept across calls: no allocation or page faults on the hot path.
  thread_local LargeVector<float> xs;
  thread_local LargeVector<std::uint8_t> code_storage;
  xs.resize(static_cast<std::size_t>(n * k));
  code_storage.resize(static_cast<std::size_t>(n * k));
  float* x = xs.data();
  OmpErrors errors;
#pragma omp parallel for schedule(static) if (n * k > (1 << 16))
  for (std::int64_t i = 0; i < n * k; ++i) errors.run([&] { x[i] = float(rows[i]); });
  errors.rethrow();
  std::uint8_t* codes = code_storage.data();
  const float* t8 = decode_table(kE4M3Fn).value;
  if (q.act == ActFormat::mxfp8) {
    std::vector<std::uint8_t> scales(static_cast<std::size_t>(n * (k / kMxBlock)));
    quantize_mx(x, n, k, MxElement::e4m3, q.mx_mode, codes, scales.data());
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t c = 0; c < k; ++c)
        rows[r * k + c] = S(t8[codes[r * k + c]]) * S(e8m0_decode(scales[r * (k / kMxBlock) + c / kMxBlock], q.e8m0_edges));
    return;
  }
  {
    const Fp8Recipe r{q.flavor, q.act_qmax > 0 ? q.act_qmax : e4m3_max(q.flavor), q.act_amax_floor,
                      q.act_scale_pow2 ? ScaleRounding::pow2_ceil : ScaleRounding::exact,
                      q.act_scale_op == ActScaleOp::reciprocal, q.act_scale_form == ActScaleForm::qmax_reciprocal};
    const BlockShape b = q.act == ActFormat::fp8_token ? BlockShape{1, k} : BlockShape{1, 128};
    std::vector<float> scales(static_cast<std::size_t>(n * ceil_div(k, b.cols)));
    quantize_fp8_blocked(x, n, k, b, r, codes, scales.data());
    // decode(code) * scale formed in S: exact in fp64 (4 + 24 significant bits), one rounding in fp32.
    const float* t = decode_table(e4m3_spec(q.flavor)).value;
    const std::int64_t bc = ceil_div(k, b.cols);
#pragma omp parallel for schedule(static) if (n * k > (1 << 16))
    for (std::int64_t rr = 0; rr < n; ++rr)
      errors.run([&] {
        for (std::int64_t c = 0; c < k; ++c) rows[rr * k + c] = S(t[codes[rr * k + c]]) * S(scales[rr * bc + c / b.cols]);
      });
    errors.rethrow();
  }
}

template <class S>
void round_to_dtype(S* v, std::int64_t n, IntermediateDtype d) {
  switch (d) {
    case IntermediateDtype::bf16: for (std::int64_t i = 0; i < n; ++i) v[i] = S(round_to_bf16(float(v[i]))); break;
    case IntermediateDtype::f16: for (std::int64_t i = 0; i < n; ++i) v[i] = S(round_to_fp16(float(v[i]))); break;
    case IntermediateDtype::f32: for (std::int64_t i = 0; i < n; ++i) v[i] = S(float(v[i])); break;
  }
}

template <class S>
void round_to_dtype(S* v, std::int64_t n, DType d) {
  round_to_dtype(v, n, d == DType::bf16 ? IntermediateDtype::bf16 : d == DType::f16 ? IntermediateDtype::f16
                                                                                      : IntermediateDtype::f32);
}

template void fake_quantize_activation_rows<float>(float*, std::int64_t, std::int64_t, const QuantScheme&);
template void fake_quantize_activation_rows<double>(double*, std::int64_t, std::int64_t, const QuantScheme&);
template void round_to_dtype<float>(float*, std::int64_t, IntermediateDtype);
template void round_to_dtype<double>(double*, std::int64_t, IntermediateDtype);
template void round_to_dtype<float>(float*, std::int64_t, DType);
template void round_to_dtype<double>(double*, std::int64_t, DType);

}  // namespace moe
