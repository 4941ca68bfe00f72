// The e4m3 flavour is a named type, never a bool: fn (OCP; NVIDIA; gfx950) or fnuz (gfx942 / MI300).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "formats/dtype.hpp"
#include "formats/format_tags.hpp"
#include "formats/minifloat.hpp"

namespace moe {


inline const MinifloatSpec& e4m3_spec(Fp8Flavor f) { return f == Fp8Flavor::fn ? kE4M3Fn : kE4M3Fnuz; }
inline DType e4m3_dtype(Fp8Flavor f) { return f == Fp8Flavor::fn ? DType::e4m3fn : DType::e4m3fnuz; }
inline float e4m3_max(Fp8Flavor f) { return f == Fp8Flavor::fn ? 448.0f : 240.0f; }

}  // namespace moe
