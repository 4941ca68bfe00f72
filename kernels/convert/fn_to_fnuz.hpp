// Checkpoint conversion e4m3fn -> e4m3fnuz for gfx942-style kernels (vLLM normalize_e4m3fn_to_e4m3fnuz; the same
// in SGLang and AITER): bytes 0x80 (-0 in fn, the only NaN in fnuz) become 0x00, the bytes are reinterpreted as
// fnuz (value_fnuz(bits) = value_fn(bits) / 2), and every weight scale and input scale is multiplied by 2.
// fn NaN codes (0x7F, 0xFF) would silently become +-240: they are counted and reported, not hidden.
//
// IN PLACE on what it is handed: only a kernel's prepare() calls it, on the harness's working copy, never on the
// pristine checkpoint tensors (docs/architecture.md; the harness fingerprints the pristine tensors to prove it).
// gfx950 keeps e4m3fn: a kernel for gfx950 must not call this (a known test bug copied the gfx942 path there).
#pragma once
#include <cstdint>
#include <span>

#include "fixtures/tensor.hpp"

namespace moe {

struct FnuzConversionReport {
  std::int64_t negative_zeros_zeroed = 0;   // 0x80 -> 0x00
  std::int64_t nan_codes_now_finite = 0;    // 0x7F / 0xFF, now +-240 in fnuz: a broken checkpoint, flag it
  std::int64_t scales_doubled = 0;
};

// weight: dtype e4m3fn (becomes e4m3fnuz). scales: f32 tensors (weight scales and input scales), each doubled.
FnuzConversionReport convert_fn_to_fnuz_in_place(Tensor& weight, std::span<Tensor* const> scales);

}  // namespace moe
