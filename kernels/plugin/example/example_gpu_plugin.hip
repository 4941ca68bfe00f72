/* An example device-memory moe-harness plugin (kernels/plugin/moe_plugin.h version 2, memory MOE_MEMORY_DEVICE): a
 * straightforward GPU MoE for bf16/fp16 weights without activation quantization, the GPU counterpart of
 * example_plugin.c (same arithmetic: fp32 sums, the intermediate rounded to the case's intermediate dtype, the
 * output rounded once). One thread per intermediate element of each (token, slot), then one thread per output
 * element summing its slots in order, so reruns are bit-identical. It stands for a kernel built outside this
 * repository that works in device memory: the harness uploads the checkpoint once per case, hands device pointers
 * and a stream, and times only run_device() with device events (the cuda and hip presets build it).
 *
 * Built with -DEXAMPLE_GPU_PLUGIN_BUG_DEFAULT_STREAM it launches on the legacy default stream instead of the stream
 * it is given (right whenever the caller synchronizes the device; the harness's stream_order probe catches it).
 * Built with -DEXAMPLE_GPU_PLUGIN_BUG_WRITE_PAST_OUT it writes the last output element once more, one element past
 * the end of `out` (the output it hands back is right; the harness's red_zones probe catches it in the guard bytes
 * after the device output).
 * Built with -DEXAMPLE_GPU_PLUGIN_BUG_SWAP_GATE_UP it reads the gate and up halves the wrong way round (one
 * realistic bug), so the GPU test can show the verdict on a device plugin is a real one.
 */
#include <stdio.h>
#include <string.h>

#include "kernels/plugin/moe_plugin.h"
#include "kernels/runtime/hip_compat.hpp"
#if defined(__HIP__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_fp16.h>
#else
#include <cuda_fp16.h>
#endif

namespace {

__device__ float bf16_to_f32(unsigned short b) { return __uint_as_float(unsigned(b) << 16); }
__device__ unsigned short f32_to_bf16(float f) { /* round to nearest even; NaN -> quiet NaN */
  const unsigned u = __float_as_uint(f);
  if (f != f) return 0x7FC0;
  return (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
__device__ float load(const void* data, int dtype, long long i) {
  if (dtype == MOE_DTYPE_BF16) return bf16_to_f32(static_cast<const unsigned short*>(data)[i]);
  if (dtype == MOE_DTYPE_F16) return __half2float(__ushort_as_half(static_cast<const unsigned short*>(data)[i]));
  return static_cast<const float*>(data)[i];
}
__device__ float round_to(int dtype, float v) {
  if (dtype == MOE_DTYPE_BF16) return bf16_to_f32(f32_to_bf16(v));
  if (dtype == MOE_DTYPE_F16) return __half2float(__float2half_rn(v));
  return v;
}

__device__ float gate_value(const moe_problem& p, float g, float u, int clamp) {
  switch (p.activation) {
    case MOE_ACT_SILU: return g / (1.0f + expf(-g)) * u;
    case MOE_ACT_GELU_TANH: return 0.5f * g * (1.0f + tanhf(0.7978845608f * (g + 0.044715f * g * g * g))) * u;
    case MOE_ACT_GELU_ERF: return 0.5f * g * (1.0f + erff(g * 0.7071067812f)) * u;
    default:
      if (clamp) {
        g = fminf(g, p.swiglu_limit);
        u = fmaxf(fminf(u, p.swiglu_limit), -p.swiglu_limit);
      }
      return (u + 1.0f) * g / (1.0f + expf(-p.swiglu_alpha * g));
  }
}

/* One expert set: the routed experts (slots picked by the routing) or the shared ones (every token, weight 1). */
struct Set {
  const void *w13, *w2;
  const float *b13, *b2;  /* NULL: no biases */
  int wdtype;
  long long inter, slots;  /* slots per token: k, or n_shared */
  int shared, clamp;
  float* mid;              /* [tokens * slots, inter] */
};

/* The expert of token t's slot j, or -1 where it is another rank's. */
__device__ long long expert_of(const moe_problem& p, const Set& s, const int* ids, long long t, long long j) {
  if (s.shared) return j;
  const long long e = ids[t * s.slots + j] - p.first_local_expert;
  return e >= 0 && e < p.local_experts ? e : -1;
}

__global__ void gate_up(moe_problem p, Set s, const void* x, int xdtype, const int* ids, const float* weights) {
  const long long row = blockIdx.y, i = (long long)blockIdx.x * blockDim.x + threadIdx.x;  /* row: t * slots + j */
  if (i >= s.inter) return;
  const long long t = row / s.slots, j = row % s.slots, e = expert_of(p, s, ids, t, j);
  if (e < 0) return;
  const long long H = p.hidden, I = s.inter;
  const int on_input = !s.shared && p.router_weight_on == MOE_ROUTER_WEIGHT_ON_INPUT;
  const float w = on_input ? weights[row] : 1.0f;
  long long gr, ur;  /* the gate and up rows of w13[e] */
  if (p.layout == MOE_LAYOUT_INTERLEAVED) gr = 2 * i, ur = 2 * i + 1;
  else if (p.layout == MOE_LAYOUT_GATE_UP) gr = i, ur = I + i;
  else ur = i, gr = I + i;
#ifdef EXAMPLE_GPU_PLUGIN_BUG_SWAP_GATE_UP
  { const long long r = gr; gr = ur; ur = r; }
#endif
  float g = 0.0f, u = 0.0f;
  for (long long c = 0; c < H; ++c) {
    float xv = load(x, xdtype, t * H + c);
    if (on_input) xv = round_to(p.input_dtype, xv * w);
    g += load(s.w13, s.wdtype, (e * 2 * I + gr) * H + c) * xv;
    u += load(s.w13, s.wdtype, (e * 2 * I + ur) * H + c) * xv;
  }
  if (s.b13) g += s.b13[e * 2 * I + gr], u += s.b13[e * 2 * I + ur];
  s.mid[row * I + i] = round_to(p.intermediate_dtype, gate_value(p, g, u, s.clamp));
}

__device__ void add_set(const moe_problem& p, const Set& s, const int* ids, const float* weights, long long t,
                        long long c, float& acc) {
  const long long H = p.hidden, I = s.inter;
  for (long long j = 0; j < s.slots; ++j) {
    const long long e = expert_of(p, s, ids, t, j);
    if (e < 0) continue;
    const float* y = s.mid + (t * s.slots + j) * I;
    float sum = 0.0f;
    for (long long i = 0; i < I; ++i) sum += load(s.w2, s.wdtype, (e * H + c) * I + i) * y[i];
    const float scale = s.shared || p.router_weight_on == MOE_ROUTER_WEIGHT_ON_INPUT ? 1.0f : weights[t * s.slots + j];
    acc += scale * (sum + (s.b2 ? s.b2[e * H + c] : 0.0f));
  }
}

__device__ void store_out(void* out, int out_dtype, long long idx, float v) {
  if (out_dtype == MOE_DTYPE_BF16) static_cast<unsigned short*>(out)[idx] = f32_to_bf16(v);
  else if (out_dtype == MOE_DTYPE_F16) static_cast<unsigned short*>(out)[idx] = __half_as_ushort(__float2half_rn(v));
  else static_cast<float*>(out)[idx] = v;
}

__global__ void down(moe_problem p, Set routed, Set shared, int n_sets, const int* ids, const float* weights,
                     void* out, int out_dtype) {
  const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= p.tokens * p.hidden) return;
  const long long t = idx / p.hidden, c = idx % p.hidden;
  float acc = 0.0f;
  add_set(p, routed, ids, weights, t, c, acc);
  if (n_sets > 1) add_set(p, shared, ids, weights, t, c, acc);
  store_out(out, out_dtype, idx, acc);
#ifdef EXAMPLE_GPU_PLUGIN_BUG_WRITE_PAST_OUT
  if (idx == p.tokens * p.hidden - 1) store_out(out, out_dtype, idx + 1, acc);  /* the bug: one element past `out` */
#endif
}

const moe_tensor* find(const moe_tensor* ts, int32_t n, const char* name) {
  for (int32_t i = 0; i < n; ++i)
    if (strcmp(ts[i].name, name) == 0) return &ts[i];
  return NULL;
}

/* Scratch for the intermediates, kept across calls (the harness calls from one thread). */
float* g_mid = NULL;
size_t g_mid_bytes = 0;

int plain(const moe_quant* q) {
  return (q->weight_format == MOE_WEIGHT_BF16 || q->weight_format == MOE_WEIGHT_FP16) && q->act_format == MOE_ACTQ_NONE;
}

int supports(const moe_problem* p, char* reason, size_t n) {
  if (!plain(&p->quant) || (p->n_shared > 0 && !plain(&p->shared_quant))) {
    snprintf(reason, n, "example GPU plugin: bf16/fp16 weights without activation quantization only");
    return 0;
  }
  return 1;
}

int run_device(const moe_problem* p, const moe_tensor* ts, int32_t n, const int32_t* ids, const float* weights,
               int32_t k, moe_tensor* out, const moe_device_context* ctx, char* variant, size_t variant_len,
               char* err, size_t err_len) {
  const moe_tensor *x = find(ts, n, "x"), *w13 = find(ts, n, "w13"), *w2 = find(ts, n, "w2");
  const moe_tensor *b13 = find(ts, n, "w13_bias"), *b2 = find(ts, n, "w2_bias");
  const moe_tensor *s13 = find(ts, n, "shared_w13"), *s2 = find(ts, n, "shared_w2");
  const int with_shared = p->n_shared > 0 && p->ep_rank == 0;
  if (!x || !w13 || !w2 || (with_shared && (!s13 || !s2))) {
    snprintf(err, err_len, "example GPU plugin: the checkpoint lacks x, w13, w2 or the shared experts' weights");
    return 1;
  }
  const long long T = p->tokens;
  Set routed = {w13->data, w2->data, b13 ? (const float*)b13->data : NULL, b2 ? (const float*)b2->data : NULL,
                w13->dtype, p->inter_local, k, 0, 1, NULL};
  Set shared = {with_shared ? s13->data : NULL, with_shared ? s2->data : NULL, NULL, NULL,
                with_shared ? s13->dtype : 0, p->shared_inter_local, with_shared ? p->n_shared : 0, 1, p->clamp_shared, NULL};
  const size_t need = sizeof(float) * (size_t)(T * (routed.slots * routed.inter + shared.slots * shared.inter));
  if (need > g_mid_bytes) {
    if (g_mid) (void)hipFree(g_mid);
    g_mid = NULL, g_mid_bytes = 0;
    const hipError_t e = hipMalloc((void**)&g_mid, need);
    if (e != hipSuccess) {
      snprintf(err, err_len, "example GPU plugin: hipMalloc of %zu bytes: %s", need, hipGetErrorString(e));
      return 1;
    }
    g_mid_bytes = need;
  }
  routed.mid = g_mid;
  shared.mid = g_mid + T * routed.slots * routed.inter;
#ifdef EXAMPLE_GPU_PLUGIN_BUG_DEFAULT_STREAM
  const hipStream_t stream = 0;  /* the bug: the legacy default stream, not the one the harness gave */
#else
  const hipStream_t stream = (hipStream_t)ctx->stream;
#endif
  const int block = 128;
  const Set* sets[2] = {&routed, &shared};
  for (const Set* s : sets) {
    if (s->slots == 0 || T == 0 || s->inter == 0) continue;
    const dim3 grid((unsigned)((s->inter + block - 1) / block), (unsigned)(T * s->slots));
    gate_up<<<grid, block, 0, stream>>>(*p, *s, x->data, x->dtype, ids, weights);
  }
  const long long elems = T * p->hidden;
  if (elems > 0)
    down<<<(unsigned)((elems + block - 1) / block), block, 0, stream>>>(*p, routed, shared, with_shared ? 2 : 1, ids,
                                                                      weights, out->data, out->dtype);
  const hipError_t e = hipGetLastError();
  if (e != hipSuccess) {
    snprintf(err, err_len, "example GPU plugin: launch failed: %s", hipGetErrorString(e));
    return 1;
  }
  snprintf(variant, variant_len, "example-gpu/naive (device %d)", ctx->device);
  return 0;
}

int rounding_contract(const moe_problem* p, const char* case_contract, char* text, size_t text_len) {
  snprintf(text, text_len, "gate_up=f32,slot=f32,reduce=f32");
  return 0;
}

moe_plugin_api make_api() {
  moe_plugin_api a = {};
  a.abi_version = 2u;
  a.struct_size = sizeof(moe_plugin_api);
#ifdef EXAMPLE_GPU_PLUGIN_BUG_SWAP_GATE_UP
  a.id = "example-gpu-plugin-swapped";
#else
  a.id = "example-gpu-plugin";
#endif
  a.version = "1.0";
  a.supports = supports;
  a.memory = MOE_MEMORY_DEVICE;
  a.run_device = run_device;
  a.rounding_contract = rounding_contract;
  return a;
}
const moe_plugin_api kApi = make_api();

}  // namespace

extern "C" MOE_PLUGIN_EXPORT const moe_plugin_api* moe_plugin_entry(uint32_t host_abi_version) {
  return host_abi_version >= 2u ? &kApi : NULL;  /* device memory needs version 2 */
}
