// Names of format choices that a problem declares (the e4m3 flavour, the MX scale rules, the activation
// quantization); the codecs and quantizers beside this header implement them. Plain C++17, so the GPU kernels take
// them as they are.
#pragma once
#include <cstdint>

namespace moe {

enum class Fp8Flavor : std::uint8_t { fn, fnuz };          // e4m3 "fn" (OCP, NVIDIA, gfx950) or "fnuz" (gfx942)
enum class MxScaleMode : std::uint8_t { floor, rceil, even };  // docs/numerics.md "MX quantizer"
enum class E8m0Edges : std::uint8_t { ocp, triton };        // decoding of 0x00 and 0xFF (formats/e8m0.hpp)
enum class MxElement : std::uint8_t { e4m3, e5m2, e2m1 };
enum class ActFormat : std::uint8_t {
  none,          // activations stay in the input dtype (a16); the stage-1 intermediate in its declared dtype
  fp8_token,     // dynamic per-token fp8 (qmax is a parameter)
  fp8_group128,  // 1x128 groups along K (DeepSeek)
  mxfp8,         // MX e4m3 with the case's scale mode
};

}  // namespace moe
