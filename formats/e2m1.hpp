// MXFP4 element packing: two E2M1 codes per byte, byte = x[2i] | (x[2i+1] << 4): the EVEN element sits in the LOW
// nibble (ONNX, gpt-oss, torchao, triton and AITER agree; docs/numerics.md).
#pragma once
#include <cstdint>

namespace moe {

inline std::uint8_t e2m1_pack(std::uint8_t even, std::uint8_t odd) { return std::uint8_t((even & 0xF) | ((odd & 0xF) << 4)); }
inline std::uint8_t e2m1_unpack(std::uint8_t byte, int which /*0 even, 1 odd*/) { return which ? byte >> 4 : byte & 0xF; }

}  // namespace moe
