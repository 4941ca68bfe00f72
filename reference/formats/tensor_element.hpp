// One element of a bf16, f16 or f32 tensor (a kernel's output) as a float, and a float stored into one, rounded to
// the tensor's dtype (nearest even). Shared by the harness's judge, the host contract kernel and the GPU adapter.
#pragma once
#include <cstdint>

#include "fixtures/tensor.hpp"
#include "reference/formats/bf16.hpp"
#include "reference/formats/fp16.hpp"

namespace moe {

inline float element_as_f32(const Tensor& t, std::int64_t i) {
  switch (t.dtype()) {
    case DType::bf16: return bf16_to_f32(t.span<std::uint16_t>()[i]);
    case DType::f16: return fp16_to_f32(t.span<std::uint16_t>()[i]);
    default: return t.span<float>()[i];
  }
}

inline void store_element(Tensor& t, std::int64_t i, float v) {
  switch (t.dtype()) {
    case DType::bf16: t.span<std::uint16_t>()[i] = bf16_from_f32(v); break;
    case DType::f16: t.span<std::uint16_t>()[i] = fp16_from_f32(v); break;
    default: t.span<float>()[i] = v; break;
  }
}

}  // namespace moe
