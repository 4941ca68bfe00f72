// probe_decode_chunks (decode_probe.hpp): one thread per chunk through the kernels' own decode_chunk.
#include "kernels/moe/decode_probe.hpp"

#include "kernels/moe/weight_loads.hpp"
#include "kernels/runtime/gpu_check.hpp"
#include "kernels/runtime/gpu_runtime.hpp"
#include "kernels/runtime/hip_compat.hpp"

namespace moe::gpu {
namespace {

template <int F>
__global__ void decode_probe_kernel(ExpertSet set, const uint4* codes, const float* scales, int n, float* out) {
  constexpr int V = kChunkWidth<F>;
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  RawChunk r;
  r.q = codes[i];
  r.s = scales[i];
  float w[V];
  decode_chunk<F>(set, r, w);
  for (int k = 0; k < V; ++k) out[std::int64_t(i) * V + k] = w[k];
}

}  // namespace

std::vector<float> probe_decode_chunks(WeightFormat f, bool fnuz, const std::vector<std::uint8_t>& codes,
                                       const std::vector<float>& scales) {
  const int n = int(scales.size());
  if (codes.size() != scales.size() * 16)
    throw_harness_error("probe_decode_chunks", "codes must hold 16 bytes per scale");
  if (f != WeightFormat::fp8_channel && f != WeightFormat::mxfp8 && f != WeightFormat::mxfp4)
    throw_harness_error("probe_decode_chunks", "format must be fp8_channel, mxfp8 or mxfp4");
  const int v = chunk_width(f);
  std::vector<float> out(std::size_t(n) * std::size_t(v));
  if (n == 0) return out;
  DeviceBuffer dc(codes.size()), ds(scales.size() * sizeof(float)), dout(out.size() * sizeof(float));
  dc.upload(codes.data(), codes.size());
  ds.upload(scales.data(), scales.size() * sizeof(float));
  ExpertSet set;
  set.wfmt = f;
  set.fnuz = fnuz;
  const dim3 grid(unsigned((n + 127) / 128)), block(128);
  const auto* c = static_cast<const uint4*>(dc.get());
  const auto* s = static_cast<const float*>(ds.get());
  auto* o = static_cast<float*>(dout.get());
  if (f == WeightFormat::fp8_channel) decode_probe_kernel<int(WeightFormat::fp8_channel)><<<grid, block, 0, MOE_LAUNCH_STREAM>>>(set, c, s, n, o);
  else if (f == WeightFormat::mxfp8) decode_probe_kernel<int(WeightFormat::mxfp8)><<<grid, block, 0, MOE_LAUNCH_STREAM>>>(set, c, s, n, o);
  else decode_probe_kernel<int(WeightFormat::mxfp4)><<<grid, block, 0, MOE_LAUNCH_STREAM>>>(set, c, s, n, o);
  MOE_GPU_CHECK_LAUNCH("decode_probe_kernel");
  dout.download(out.data(), out.size() * sizeof(float));
  return out;
}

}  // namespace moe::gpu
