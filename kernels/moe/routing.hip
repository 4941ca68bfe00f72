// One block per token, one thread per expert (experts <= 1024). No warp-size assumption: arg-max reductions go
// through shared memory. Selection is repeated arg-max with the lower index winning ties.
#include "kernels/moe/routing.hpp"
#include "kernels/runtime/gpu_check.hpp"
#include "kernels/runtime/hip_compat.hpp"

namespace moe::gpu {
namespace {

constexpr int kMaxExperts = 1024;

// Block arg-max over v[0..n): the largest value, the lowest index among equals. Every thread gets the result.
__device__ int block_argmax(const float* v, int n, float* sval, int* sidx) {
  const int t = threadIdx.x;
  float best = -INFINITY;
  int bi = 0x7fffffff;
  for (int i = t; i < n; i += blockDim.x)
    if (v[i] > best || (v[i] == best && i < bi)) { best = v[i]; bi = i; }
  sval[t] = best;
  sidx[t] = bi;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) {
      const float o = sval[t + stride];
      const int oi = sidx[t + stride];
      if (o > sval[t] || (o == sval[t] && oi < sidx[t])) { sval[t] = o; sidx[t] = oi; }
    }
    __syncthreads();
  }
  const int r = sidx[0];
  __syncthreads();
  return r;
}

__global__ void routing_kernel(RoutingArgs a) {
  __shared__ float score[kMaxExperts], sel[kMaxExperts], gscore[kMaxExperts];
  __shared__ float sval[kMaxExperts];
  __shared__ int sidx[kMaxExperts];
  __shared__ float picked[32];
  __shared__ int kept_groups[32];
  const std::int64_t tok = blockIdx.x;
  const int E = a.experts, t = threadIdx.x;
  const float* l = a.logits + tok * E;
  if (a.mode == RoutingMode::softmax_topk) {
    for (int i = t; i < E; i += blockDim.x) sel[i] = l[i];
    __syncthreads();
    const int m = block_argmax(sel, E, sval, sidx);
    const float mx = l[m];
    // The sum is taken in index order by thread 0, as the reference sums (bit-identical when expf agrees).
    for (int i = t; i < E; i += blockDim.x) score[i] = expf(l[i] - mx);
    __syncthreads();
    if (t == 0) {
      float s = 0.0f;
      for (int i = 0; i < E; ++i) s += score[i];
      sval[0] = s;
    }
    __syncthreads();
    const float sum = sval[0];
    __syncthreads();
    for (int i = t; i < E; i += blockDim.x) sel[i] = score[i] / sum;
    __syncthreads();
    for (int i = t; i < E; i += blockDim.x) score[i] = sel[i];
    __syncthreads();
  } else {
    for (int i = t; i < E; i += blockDim.x) {
      score[i] = 1.0f / (1.0f + expf(-l[i]));
      sel[i] = a.mode == RoutingMode::grouped_sigmoid ? score[i] + a.bias[i] : l[i];
    }
    __syncthreads();
  }
  if (a.mode == RoutingMode::grouped_sigmoid) {
    const int per = E / a.n_group;
    // Group score: the sum of the group's top-2 corrected scores.
    for (int g = t; g < a.n_group; g += blockDim.x) {
      float b1 = -INFINITY, b2 = -INFINITY;
      int i1 = -1;
      for (int i = g * per; i < (g + 1) * per; ++i)
        if (sel[i] > b1) { b1 = sel[i]; i1 = i; }
      for (int i = g * per; i < (g + 1) * per; ++i)
        if (i != i1 && sel[i] > b2) b2 = sel[i];
      gscore[g] = b1 + b2;
    }
    __syncthreads();
    for (int r = 0; r < a.topk_group; ++r) {
      const int g = block_argmax(gscore, a.n_group, sval, sidx);
      if (t == 0) {
        kept_groups[r] = g;
        gscore[g] = -INFINITY;
      }
      __syncthreads();
    }
    // Mask every expert of a dropped group with -inf (not 0: a kept group's corrected scores may be negative).
    for (int i = t; i < E; i += blockDim.x) {
      bool kept = false;
      for (int r = 0; r < a.topk_group; ++r) kept |= (kept_groups[r] == i / per);
      if (!kept) sel[i] = -INFINITY;
    }
    __syncthreads();
  }
  float wsum = 0.0f;
  for (int j = 0; j < a.topk; ++j) {
    const int id = block_argmax(sel, E, sval, sidx);
    if (t == 0) {
      a.ids[tok * a.topk + j] = id;
      picked[j] = score[id];
      sel[id] = -INFINITY;
    }
    __syncthreads();
    wsum += picked[j];
  }
  if (t == 0)
    for (int j = 0; j < a.topk; ++j) {
      float w = picked[j];
      if (a.mode == RoutingMode::softmax_topk && a.renormalize) w = w / wsum;
      if (a.mode == RoutingMode::grouped_sigmoid) {
        if (a.renormalize) w = w / (wsum + 1e-20f);
        w *= a.routed_scaling;
      }
      a.weights[tok * a.topk + j] = w;
    }
}

}  // namespace

void launch_routing(const RoutingArgs& a) {
  if (a.experts > kMaxExperts || a.topk > 32 || a.topk_group > 32)
    throw_harness_error("launch_routing", "routing kernel limits: experts <= 1024, topk <= 32, topk_group <= 32");
  if (a.tokens == 0) return;
  routing_kernel<<<dim3(unsigned(a.tokens)), dim3(256), 0, MOE_LAUNCH_STREAM>>>(a);
  MOE_GPU_CHECK_LAUNCH("routing_kernel");
}

}  // namespace moe::gpu
