#include "formats/minifloat.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace moe {

double MinifloatSpec::max_finite() const {
  const int emask = (1 << exponent_bits) - 1;
  const int mmask = (1 << mantissa_bits) - 1;
  int top_e = emask, top_m = mmask;
  if (nan == NanEncoding::ieee) top_e = emask - 1;       // all-ones exponent is Inf/NaN
  else if (nan == NanEncoding::all_ones) top_m = mmask - 1;  // s.1111.111 is NaN
  return std::ldexp(1.0 + double(top_m) / double(1 << mantissa_bits), top_e - bias);
}
double MinifloatSpec::min_normal() const { return std::ldexp(1.0, 1 - bias); }
double MinifloatSpec::min_subnormal() const { return std::ldexp(1.0, 1 - bias - mantissa_bits); }

const MinifloatSpec* minifloat_spec_of(DType t) {
  switch (t) {
    case DType::f16: return &kFp16;
    case DType::e4m3fn: return &kE4M3Fn;
    case DType::e4m3fnuz: return &kE4M3Fnuz;
    case DType::e5m2: return &kE5M2;
    case DType::e5m2fnuz: return &kE5M2Fnuz;
    case DType::e2m1x2: return &kE2M1;
    default: return nullptr;
  }
}

float minifloat_decode(const MinifloatSpec& s, std::uint32_t code) {
  const int mb = s.mantissa_bits, eb = s.exponent_bits;
  const std::uint32_t emask = (1u << eb) - 1, mmask = (1u << mb) - 1;
  code &= (1u << s.total_bits()) - 1;
  const bool neg = (code >> (eb + mb)) & 1u;
  const std::uint32_t e = (code >> mb) & emask, m = code & mmask;
  constexpr float qnan = std::numeric_limits<float>::quiet_NaN();
  switch (s.nan) {
    case NanEncoding::negative_zero_code:
      if (neg && e == 0 && m == 0) return qnan;
      break;
    case NanEncoding::all_ones:
      if (e == emask && m == mmask) return neg ? -qnan : qnan;
      break;
    case NanEncoding::ieee:
      if (e == emask) {
        if (m == 0) return neg ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
        return neg ? -qnan : qnan;
      }
      break;
    case NanEncoding::none: break;
  }
  const double mag = e == 0 ? std::ldexp(double(m), 1 - s.bias - mb)
                            : std::ldexp(1.0 + double(m) / double(1u << mb), int(e) - s.bias);
  return float(neg ? -mag : mag);
}

std::uint32_t minifloat_encode(const MinifloatSpec& s, float x) {
  const int mb = s.mantissa_bits, eb = s.exponent_bits;
  const std::uint32_t sign_bit = 1u << (eb + mb);
  const std::uint32_t emask = (1u << eb) - 1;
  if (std::isnan(x)) {
    switch (s.nan) {
      case NanEncoding::negative_zero_code: return sign_bit;
      case NanEncoding::all_ones: return (std::signbit(x) ? sign_bit : 0u) | (sign_bit - 1);
      case NanEncoding::ieee: return (std::signbit(x) ? sign_bit : 0u) | (emask << mb) | (1u << (mb - 1));
      case NanEncoding::none: return 0u;
    }
  }
  const bool neg = std::signbit(x);
  double a = std::fabs(double(x));
  const double maxf = s.max_finite();
  double r;
  if (std::isinf(a)) {
    r = a;
  } else if (a == 0.0) {
    r = 0.0;
  } else {
    int e2;
    std::frexp(a, &e2);                            // a = f * 2^e2, f in [0.5, 1): floor(log2 a) = e2 - 1
    const int exp = std::max(e2 - 1, 1 - s.bias);  // below the normal range the quantum stays the subnormal one
    const double quantum = std::ldexp(1.0, exp - mb);
    r = std::nearbyint(a / quantum) * quantum;     // a / quantum is exact; nearbyint rounds half to even
  }
  if (r > maxf) {
    if (s.saturate || !s.has_inf()) r = maxf;
    else return (neg ? sign_bit : 0u) | (emask << mb);  // IEEE overflow to Inf
  }
  if (r == 0.0) return (neg && s.has_negative_zero()) ? sign_bit : 0u;
  int e2;
  std::frexp(r, &e2);
  const int unbiased = e2 - 1;
  std::uint32_t e, m;
  if (unbiased < 1 - s.bias) {
    e = 0;
    m = std::uint32_t(std::ldexp(r, s.bias - 1 + mb));
  } else {
    e = std::uint32_t(unbiased + s.bias);
    m = std::uint32_t((std::ldexp(r, -unbiased) - 1.0) * double(1u << mb));
  }
  return (neg ? sign_bit : 0u) | (e << mb) | m;
}

namespace {
DecodeTable build(const MinifloatSpec& s) {
  DecodeTable t{};
  const int n = 1 << s.total_bits();
  for (int c = 0; c < 256; ++c) t.value[c] = minifloat_decode(s, std::uint32_t(c % n));
  return t;
}
}  // namespace

const DecodeTable& decode_table(const MinifloatSpec& s) {
  static const DecodeTable e4m3fn = build(kE4M3Fn), e4m3fnuz = build(kE4M3Fnuz), e5m2 = build(kE5M2),
                           e5m2fnuz = build(kE5M2Fnuz), e2m1 = build(kE2M1);
  if (s.name == kE4M3Fn.name) return e4m3fn;
  if (s.name == kE4M3Fnuz.name) return e4m3fnuz;
  if (s.name == kE5M2.name) return e5m2;
  if (s.name == kE5M2Fnuz.name) return e5m2fnuz;
  if (s.name == kE2M1.name) return e2m1;
  throw std::invalid_argument("decode_table: no table for format " + std::string(s.name));
}

}  // namespace moe
