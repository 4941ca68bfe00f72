// The e4m3 flavour is a named type, never a bool (STYLE.md): fn (OCP; NVIDIA; gfx950) or fnuz (gfx942 / MI300).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "fixtures/dtype.hpp"
#include "reference/formats/minifloat.hpp"

namespace moe {

enum class Fp8Flavor : std::uint8_t { fn, fnuz };

inline const MinifloatSpec& e4m3_spec(Fp8Flavor f) { return f == Fp8Flavor::fn ? kE4M3Fn : kE4M3Fnuz; }
inline DType e4m3_dtype(Fp8Flavor f) { return f == Fp8Flavor::fn ? DType::e4m3fn : DType::e4m3fnuz; }
inline float e4m3_max(Fp8Flavor f) { return f == Fp8Flavor::fn ? 448.0f : 240.0f; }
inline std::string_view fp8_flavor_name(Fp8Flavor f) { return f == Fp8Flavor::fn ? "fn" : "fnuz"; }
inline std::optional<Fp8Flavor> parse_fp8_flavor(std::string_view s) {
  if (s == "fn") return Fp8Flavor::fn;
  if (s == "fnuz") return Fp8Flavor::fnuz;
  return std::nullopt;
}

}  // namespace moe
