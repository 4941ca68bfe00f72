#include "kernels/convert/fn_to_fnuz.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "fixtures/error.hpp"
#include "formats/minifloat.hpp"

namespace moe {

TEST(FnToFnuz, NegativeZeroBecomesZero_AndScaleDoubles_AndNanCodesReported) {
  Tensor w("w13", DType::e4m3fn, {6});
  const std::uint8_t in[6] = {0x80, 0x00, 0x7F, 0xFF, 0x38, 0xB8};
  for (int i = 0; i < 6; ++i) w.span<std::uint8_t>()[i] = in[i];
  Tensor ws("w13_scale", DType::f32, {1});
  ws.span<float>()[0] = 0.5f;
  Tensor is("a13_scale", DType::f32, {1});
  is.span<float>()[0] = 0.125f;
  Tensor* scales[] = {&ws, &is};
  const FnuzConversionReport r = convert_fn_to_fnuz_in_place(w, scales);
  EXPECT_EQ(w.dtype(), DType::e4m3fnuz);
  const std::uint8_t want[6] = {0x00, 0x00, 0x7F, 0xFF, 0x38, 0xB8};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(w.span<std::uint8_t>()[i], want[i]) << i;
  EXPECT_EQ(ws.span<float>()[0], 1.0f);
  EXPECT_EQ(is.span<float>()[0], 0.25f);
  EXPECT_EQ(r.negative_zeros_zeroed, 1);
  EXPECT_EQ(r.nan_codes_now_finite, 2);
  EXPECT_EQ(r.scales_doubled, 2);
}

TEST(FnToFnuz, EveryFiniteCodeKeepsItsDequantizedValue) {
  Tensor w("w", DType::e4m3fn, {256});
  for (int c = 0; c < 256; ++c) w.span<std::uint8_t>()[c] = std::uint8_t(c);
  Tensor s("s", DType::f32, {1});
  s.span<float>()[0] = 0.75f;
  Tensor pristine = w.clone();
  Tensor* scales[] = {&s};
  convert_fn_to_fnuz_in_place(w, scales);
  for (int c = 0; c < 256; ++c) {
    if (c == 0x7F || c == 0xFF) continue;  // fn NaN: no value to keep (reported instead)
    const float before = minifloat_decode(kE4M3Fn, c) * 0.75f;
    const float after = minifloat_decode(kE4M3Fnuz, w.span<std::uint8_t>()[c]) * s.span<float>()[0];
    EXPECT_EQ(before, after) << "code " << c;
  }
  EXPECT_NE(pristine.fingerprint(), w.fingerprint());  // it really worked in place
}

TEST(FnToFnuz, RefusesToConvertTwice) {
  Tensor w("w", DType::e4m3fn, {4});
  Tensor* none[] = {nullptr};
  convert_fn_to_fnuz_in_place(w, std::span<Tensor* const>(none, 0));
  EXPECT_THROW(convert_fn_to_fnuz_in_place(w, std::span<Tensor* const>(none, 0)), Error);
}

}  // namespace moe
