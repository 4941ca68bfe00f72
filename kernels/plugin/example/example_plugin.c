/* An example moe-harness kernel plugin in plain C (kernels/plugin/moe_plugin.h): a straightforward CPU MoE for
 * bf16/fp16 weights without activation quantization. It stands for a kernel built outside this repository; the
 * tests build it as a shared library and judge it with `moe-harness run --plugin`.
 *
 * Built with -DEXAMPLE_PLUGIN_BUG_SWAP_GATE_UP it reads the gate and up halves the wrong way round (one realistic
 * bug), so the tests can show a plugin's verdict is a real one. Built with -DEXAMPLE_PLUGIN_RACY every other call
 * perturbs one element slightly, as a float-atomic reduce does; with -DEXAMPLE_PLUGIN_DECLARES_NONDETERMINISTIC as
 * well it says so through the ABI, and the harness then does not ask for bit-identical reruns.
 *
 * Rounding contract: it exports the optional moe_plugin_rounding_contract, declaring where it rounds. Plain, it keeps
 * h, each slot and the sum in fp32 (gate_up=f32,slot=f32,reduce=f32). Built with -DEXAMPLE_PLUGIN_ROUNDS_LIKE_VLLM it
 * rounds h to bf16 before the activation and each slot's weighted output to bf16 before the sum, as vLLM's Triton
 * pipeline does, and declares gate_up=bf16,slot=bf16; with -DEXAMPLE_PLUGIN_NO_CONTRACT_SYMBOL as well it rounds so
 * without the symbol (a plugin built before the symbol existed), and the harness judges it as keeping them in fp32.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/plugin/moe_plugin.h"

static float bf16_to_f32(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t f32_to_bf16(float f) { /* round to nearest even; NaN -> quiet NaN */
  uint32_t u;
  memcpy(&u, &f, 4);
  if (isnan(f)) return 0x7FC0;
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
static float load(const moe_tensor* t, int64_t i) {
  switch (t->dtype) {
    case MOE_DTYPE_BF16: return bf16_to_f32(((const uint16_t*)t->data)[i]);
    case MOE_DTYPE_F16: return (float)((const _Float16*)t->data)[i];
    default: return ((const float*)t->data)[i];
  }
}
static float round_to(int32_t dtype, float v) {
  if (dtype == MOE_DTYPE_BF16) return bf16_to_f32(f32_to_bf16(v));
  if (dtype == MOE_DTYPE_F16) return (float)(_Float16)v;
  return v;
}
static const moe_tensor* find(const moe_tensor* ts, int32_t n, const char* name) {
  for (int32_t i = 0; i < n; ++i)
    if (strcmp(ts[i].name, name) == 0) return &ts[i];
  return NULL;
}

static float gate_value(const moe_problem* p, float g, float u, int clamp) {
  switch (p->activation) {
    case MOE_ACT_SILU: return g / (1.0f + expf(-g)) * u;
    case MOE_ACT_GELU_TANH: return 0.5f * g * (1.0f + tanhf(0.7978845608f * (g + 0.044715f * g * g * g))) * u;
    case MOE_ACT_GELU_ERF: return 0.5f * g * (1.0f + erff(g * 0.7071067812f)) * u;
    default:
      if (clamp) {
        g = fminf(g, p->swiglu_limit);
        u = fmaxf(fminf(u, p->swiglu_limit), -p->swiglu_limit);
      }
      return (u + 1.0f) * g / (1.0f + expf(-p->swiglu_alpha * g));
  }
}

/* acc[H] += scale * expert(e)(x[H]) */
static void expert(const moe_problem* p, const moe_tensor* w13, const moe_tensor* w2, const moe_tensor* b13,
                   const moe_tensor* b2, int64_t e, int64_t inter, const float* x, float scale, int clamp, float* acc,
                   float* h, float* y) {
  const int64_t H = p->hidden;
  for (int64_t r = 0; r < 2 * inter; ++r) {
    const int64_t base = (e * 2 * inter + r) * H;
    float s = 0.0f;
    for (int64_t c = 0; c < H; ++c) s += load(w13, base + c) * x[c];
    h[r] = s + (b13 ? load(b13, e * 2 * inter + r) : 0.0f);
#ifdef EXAMPLE_PLUGIN_ROUNDS_LIKE_VLLM
    h[r] = round_to(MOE_DTYPE_BF16, h[r]);
#endif
  }
  for (int64_t i = 0; i < inter; ++i) {
    float g, u;
    if (p->layout == MOE_LAYOUT_INTERLEAVED) { g = h[2 * i]; u = h[2 * i + 1]; }
    else if (p->layout == MOE_LAYOUT_GATE_UP) { g = h[i]; u = h[inter + i]; }
    else { u = h[i]; g = h[inter + i]; }
#ifdef EXAMPLE_PLUGIN_BUG_SWAP_GATE_UP
    { float t = g; g = u; u = t; }
#endif
    y[i] = round_to(p->intermediate_dtype, gate_value(p, g, u, clamp));
  }
  for (int64_t r = 0; r < H; ++r) {
    const int64_t base = (e * H + r) * inter;
    float s = 0.0f;
    for (int64_t c = 0; c < inter; ++c) s += load(w2, base + c) * y[c];
#ifdef EXAMPLE_PLUGIN_ROUNDS_LIKE_VLLM
    acc[r] += round_to(MOE_DTYPE_BF16, scale * (s + (b2 ? load(b2, e * H + r) : 0.0f)));
#else
    acc[r] += scale * (s + (b2 ? load(b2, e * H + r) : 0.0f));
#endif
  }
}

static int plain(const moe_quant* q) {
  return (q->weight_format == MOE_WEIGHT_BF16 || q->weight_format == MOE_WEIGHT_FP16) && q->act_format == MOE_ACTQ_NONE;
}

static int supports(const moe_problem* p, char* reason, size_t n) {
  if (!plain(&p->quant) || (p->n_shared > 0 && !plain(&p->shared_quant))) {
    snprintf(reason, n, "example plugin: bf16/fp16 weights without activation quantization only");
    return 0;
  }
  return 1;
}

static int run(const moe_problem* p, const moe_tensor* ts, int32_t n, const int32_t* ids, const float* weights,
               int32_t k, moe_tensor* out, char* variant, size_t variant_len, char* err, size_t err_len) {
  const moe_tensor *x = find(ts, n, "x"), *w13 = find(ts, n, "w13"), *w2 = find(ts, n, "w2");
  const moe_tensor *b13 = find(ts, n, "w13_bias"), *b2 = find(ts, n, "w2_bias");
  if (!x || !w13 || !w2) {
    snprintf(err, err_len, "example plugin: the checkpoint lacks x, w13 or w2");
    return 1;
  }
  const int64_t H = p->hidden, I = p->inter_local > p->shared_inter_local ? p->inter_local : p->shared_inter_local;
  float *acc = malloc(sizeof(float) * H), *xin = malloc(sizeof(float) * H), *h = malloc(sizeof(float) * 2 * I),
        *y = malloc(sizeof(float) * I);
  if (!acc || !xin || !h || !y) {
    free(acc); free(xin); free(h); free(y);
    snprintf(err, err_len, "example plugin: out of memory");
    return 1;
  }
  for (int64_t t = 0; t < p->tokens; ++t) {
    memset(acc, 0, sizeof(float) * H);
    for (int32_t j = 0; j < k; ++j) {
      const int64_t e = ids[t * k + j] - p->first_local_expert;
      if (e < 0 || e >= p->local_experts) continue; /* EP: another rank's expert */
      float w = weights[t * k + j];
      for (int64_t c = 0; c < H; ++c) xin[c] = load(x, t * H + c);
      if (p->router_weight_on == MOE_ROUTER_WEIGHT_ON_INPUT) {
        for (int64_t c = 0; c < H; ++c) xin[c] = round_to(p->input_dtype, xin[c] * w);
        w = 1.0f;
      }
      expert(p, w13, w2, b13, b2, e, p->inter_local, xin, w, 1, acc, h, y);
    }
    if (p->n_shared > 0 && p->ep_rank == 0) {
      const moe_tensor *s13 = find(ts, n, "shared_w13"), *s2 = find(ts, n, "shared_w2");
      for (int64_t c = 0; c < H; ++c) xin[c] = load(x, t * H + c);
      for (int64_t s = 0; s < p->n_shared; ++s)
        expert(p, s13, s2, NULL, NULL, s, p->shared_inter_local, xin, 1.0f, p->clamp_shared, acc, h, y);
    }
#ifdef EXAMPLE_PLUGIN_RACY
    {
      static int calls = 0;
      if (t == 0 && (calls++ & 1)) acc[0] *= 1.0f + 1.0f / 64.0f;  /* another summation order, another last bit */
    }
#endif
    for (int64_t c = 0; c < H; ++c) {
      if (out->dtype == MOE_DTYPE_BF16) ((uint16_t*)out->data)[t * H + c] = f32_to_bf16(acc[c]);
      else if (out->dtype == MOE_DTYPE_F16) ((_Float16*)out->data)[t * H + c] = (_Float16)acc[c];
      else ((float*)out->data)[t * H + c] = acc[c];
    }
  }
  free(acc); free(xin); free(h); free(y);
  snprintf(variant, variant_len, "example-c/loops");
  return 0;
}

#ifdef EXAMPLE_PLUGIN_DECLARES_NONDETERMINISTIC
static int deterministic(const moe_problem* p) { return 0; }
#else
#define deterministic NULL /* plain loops in a fixed order */
#endif

#ifndef EXAMPLE_PLUGIN_NO_CONTRACT_SYMBOL
/* Where this kernel rounds, whatever the case's contract (case_contract) names: the points it fixes. */
MOE_PLUGIN_EXPORT int moe_plugin_rounding_contract(const moe_problem* p, const char* case_contract, char* text,
                                                   size_t text_len) {
  (void)p;
  (void)case_contract;
#ifdef EXAMPLE_PLUGIN_ROUNDS_LIKE_VLLM
  snprintf(text, text_len, "gate_up=bf16,slot=bf16,reduce=f32");
#else
  snprintf(text, text_len, "gate_up=f32,slot=f32,reduce=f32");
#endif
  return 0;
}
#endif

#ifndef EXAMPLE_PLUGIN_NO_TABLE /* kernels/plugin/tests/abi_plugin.c builds its own tables around this code */
/* Version 2 of the ABI, host memory (the fields it leaves out are zero: MOE_MEMORY_HOST, no run_device, the
 * rounding contract through the symbol above). */
static const moe_plugin_api kApi = {
    MOE_PLUGIN_ABI_VERSION, sizeof(moe_plugin_api), "example-c-plugin", "1.0", supports, NULL, run,
    deterministic,
};

MOE_PLUGIN_EXPORT const moe_plugin_api* moe_plugin_entry(uint32_t host_abi_version) {
  return host_abi_version >= 2 ? &kApi : NULL; /* a version 1 host gets NULL: this table is version 2 */
}
#endif
