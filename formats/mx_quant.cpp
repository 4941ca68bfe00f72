#include "formats/mx_quant.hpp"

#include <bit>
#include <algorithm>
#include <cmath>

#include "formats/e2m1.hpp"
#include "formats/e4m3_encode.hpp"
#include "formats/omp_errors.hpp"

namespace moe {

const MinifloatSpec& mx_element_spec(MxElement e) {
  switch (e) {
    case MxElement::e4m3: return kE4M3Fn;
    case MxElement::e5m2: return kE5M2;
    default: return kE2M1;
  }
}
std::optional<MxElement> mx_element_of(DType element) {
  switch (element) {
    case DType::e4m3fn: return MxElement::e4m3;
    case DType::e5m2: return MxElement::e5m2;
    case DType::e2m1x2: return MxElement::e2m1;
    default: return std::nullopt;
  }
}
int mx_element_emax(MxElement e) { return e == MxElement::e4m3 ? 8 : e == MxElement::e5m2 ? 15 : 2; }


namespace {
int floor_log2(float a) {  // a > 0 finite; exact for subnormals too
  int e;
  std::frexp(a, &e);
  return e - 1;
}
int ceil_log2(float a) {
  int e;
  const float f = std::frexp(a, &e);
  return f == 0.5f ? e - 1 : e;
}
}  // namespace

int mx_shared_exponent(float amax, MxElement e, MxScaleMode mode) {
  if (!(amax > 0.0f)) return -127;
  if (std::isinf(amax)) return 127;
  int x = 0;
  switch (mode) {
    case MxScaleMode::floor: x = floor_log2(amax) - mx_element_emax(e); break;
    case MxScaleMode::rceil: x = ceil_log2(amax / float(mx_element_spec(e).max_finite())); break;
    case MxScaleMode::even: {
      std::uint32_t bits = std::bit_cast<std::uint32_t>(amax);
      bits = (bits + (1u << (22 - mx_element_spec(e).mantissa_bits))) & 0xFF800000u;
      const float rounded = std::bit_cast<float>(bits);
      x = std::isinf(rounded) ? 128 - mx_element_emax(e) : floor_log2(rounded) - mx_element_emax(e);
      break;
    }
  }
  return std::clamp(x, -127, 127);
}

void quantize_mx(const float* x, std::int64_t rows, std::int64_t cols, MxElement e, MxScaleMode mode,
                 std::uint8_t* elements, std::uint8_t* scales) {
  const MinifloatSpec& spec = mx_element_spec(e);
  const std::int64_t nb = cols / kMxBlock;
  OmpErrors errors;
#pragma omp parallel for schedule(static) if (rows * cols > (1 << 16))
  for (std::int64_t r = 0; r < rows; ++r) errors.run([&] {
    for (std::int64_t b = 0; b < nb; ++b) {
      const float* v = x + r * cols + b * kMxBlock;
      float amax = 0.0f;
      bool nan = false;
      for (int i = 0; i < kMxBlock; ++i) {
        nan |= std::isnan(v[i]);
        amax = std::fmax(amax, std::fabs(v[i]));
      }
      const int se = mx_shared_exponent(amax, e, mode);
      scales[r * nb + b] = nan ? 0xFF : e8m0_from_exponent(se);
      std::uint8_t q[kMxBlock];
      // V / X as V * 2^-se: one correctly rounded product, the value ldexp gives (2^-se, se in [-127, 127], is an
      // fp32 number, 2^-127 a subnormal one). The fast encoders equal minifloat_encode for every input.
      const float inv = std::ldexp(1.0f, -se);
      if (e == MxElement::e4m3)
        for (int i = 0; i < kMxBlock; ++i) q[i] = e4m3_encode(Fp8Flavor::fn, v[i] * inv);
      else if (e == MxElement::e2m1)
        for (int i = 0; i < kMxBlock; ++i) q[i] = e2m1_encode(v[i] * inv);
      else
        for (int i = 0; i < kMxBlock; ++i) q[i] = std::uint8_t(minifloat_encode(spec, v[i] * inv));
      if (e == MxElement::e2m1) {
        std::uint8_t* out = elements + r * (cols / 2) + b * (kMxBlock / 2);
        for (int i = 0; i < kMxBlock / 2; ++i) out[i] = e2m1_pack(q[2 * i], q[2 * i + 1]);
      } else {
        std::uint8_t* out = elements + r * cols + b * kMxBlock;
        for (int i = 0; i < kMxBlock; ++i) out[i] = q[i];
      }
    }
  });
  errors.rethrow();
}

void dequantize_mx(const std::uint8_t* elements, const std::uint8_t* scales, std::int64_t rows, std::int64_t cols,
                   MxElement e, E8m0Edges edges, float* out) {
  const DecodeTable& t = decode_table(mx_element_spec(e));
  const std::int64_t nb = cols / kMxBlock;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const float s = e8m0_decode(scales[r * nb + c / kMxBlock], edges);
      const std::uint8_t code = e == MxElement::e2m1 ? e2m1_unpack(elements[r * (cols / 2) + c / 2], int(c & 1))
                                                     : elements[r * cols + c];
      out[r * cols + c] = t.value[code] * s;
    }
  }
}

}  // namespace moe
