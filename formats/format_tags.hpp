// Names of format choices that a problem declares (the e4m3 flavour, the MX scale rules); the codecs beside this
// header implement them.
#pragma once
#include <cstdint>

namespace moe {

enum class Fp8Flavor : std::uint8_t { fn, fnuz };          // e4m3 "fn" (OCP, NVIDIA, gfx950) or "fnuz" (gfx942)
enum class MxScaleMode : std::uint8_t { floor, rceil, even };  // NUMERICS.md "Scale selection modes"
enum class E8m0Edges : std::uint8_t { ocp, triton };        // decoding of 0x00 and 0xFF (formats/e8m0.hpp)
enum class MxElement : std::uint8_t { e4m3, e5m2, e2m1 };

}  // namespace moe
