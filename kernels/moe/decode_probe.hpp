// A window on the grouped kernels' weight-chunk decoder (decode_chunk in weight_loads.hpp) for the GPU tests:
// they pin it bit for bit against the host reference's format decoders over every code.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/moe/fused_moe.hpp"

namespace moe::gpu {

// Decodes chunks of 16 bytes of weight codes in format f (fp8_channel, mxfp8 or mxfp4; fnuz for the fp8 flavour),
// chunk i with the already decoded fp32 scale scales[i], through the kernels' decode_chunk on the device. Returns
// chunk_width(f) floats per chunk, in element order. Throws moe::Error on a runtime failure.
std::vector<float> probe_decode_chunks(WeightFormat f, bool fnuz, const std::vector<std::uint8_t>& codes,
                                       const std::vector<float>& scales);

}  // namespace moe::gpu
