/* moe-harness kernel plugin ABI (C). A kernel built outside this repository is judged by
 *   moe-harness run --plugin /path/to/libmykernel.so [--suite S] [--filter GLOB]...
 * The harness dlopen()s the library from that explicit path (never a search path), calls
 *   const moe_plugin_api* moe_plugin_entry(uint32_t host_abi_version);
 * and refuses the plugin, with a message naming both numbers, unless the returned table's abi_version equals the
 * host's MOE_PLUGIN_ABI_VERSION and its struct_size covers this version's table. A plugin that cannot serve the
 * host's version returns NULL.
 *
 * Data: the harness hands prepare() the tensors of its WORKING copy of the checkpoint (never the pristine tensors the
 * reference reads; converting or shuffling them in place there is allowed), and run() those tensors, the reference
 * routing (topk ids are GLOBAL expert ids; local expert = id - first_local_expert, skip ids outside the local
 * range), and an output buffer [tokens, hidden] in output_dtype pre-filled with a NaN sentinel: every element must
 * be written. Tensor names and layouts are the checkpoint's (README "Export"): x [T,H]; router_logits [T,E];
 * w13 [E_l, 2*I_l, H] (rows in `layout`); w2 [E_l, H, I_l]; w13_scale, w2_scale, w13_bias [E_l, 2*I_l] f32,
 * w2_bias [E_l, H] f32; shared experts prefixed "shared_".
 *
 * Return 0 for success; otherwise write a message into err (NUL-terminated, at most err_len bytes) and return
 * non-zero: the case is reported as an error of that case, not a crash of the run. All strings are UTF-8.
 *
 * Optional symbols: the loader looks them up by name; a plugin without them loads and runs as before (ABI 1).
 *   moe_plugin_rounding_contract  (moe_plugin_rounding_contract_fn, since 2026-12-01) the kernel's rounding contract.
 *
 * Version history: 1 (2026-11-30) first version; 2026-12-01 the optional moe_plugin_rounding_contract (ABI still 1).
 */
#ifndef MOE_PLUGIN_H
#define MOE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MOE_PLUGIN_ABI_VERSION 1u
#define MOE_PLUGIN_ENTRY_SYMBOL "moe_plugin_entry"
/* Put in front of the plugin's moe_plugin_entry definition (works with -fvisibility=hidden). */
#define MOE_PLUGIN_EXPORT __attribute__((visibility("default")))

/* Element types (storage). E2M1X2: two e2m1 codes per byte, even element in the low nibble. */
enum moe_dtype {
  MOE_DTYPE_F32 = 1, MOE_DTYPE_F16 = 2, MOE_DTYPE_BF16 = 3, MOE_DTYPE_E4M3FN = 4, MOE_DTYPE_E4M3FNUZ = 5,
  MOE_DTYPE_E5M2 = 6, MOE_DTYPE_E5M2FNUZ = 7, MOE_DTYPE_E8M0 = 8, MOE_DTYPE_E2M1X2 = 9, MOE_DTYPE_I32 = 10,
  MOE_DTYPE_U8 = 11, MOE_DTYPE_I64 = 12
};
enum moe_activation { MOE_ACT_SILU = 1, MOE_ACT_SWIGLU_OAI = 2, MOE_ACT_GELU_TANH = 3, MOE_ACT_GELU_ERF = 4 };
enum moe_layout { MOE_LAYOUT_GATE_UP = 1, MOE_LAYOUT_UP_GATE = 2, MOE_LAYOUT_INTERLEAVED = 3 };
enum moe_weight_format {
  MOE_WEIGHT_BF16 = 1, MOE_WEIGHT_FP16 = 2, MOE_WEIGHT_FP8_TENSOR = 3, MOE_WEIGHT_FP8_CHANNEL = 4,
  MOE_WEIGHT_FP8_BLOCK = 5, MOE_WEIGHT_MXFP8 = 6, MOE_WEIGHT_MXFP4 = 7
};
enum moe_act_format { MOE_ACTQ_NONE = 1, MOE_ACTQ_FP8_TOKEN = 2, MOE_ACTQ_FP8_GROUP128 = 3, MOE_ACTQ_MXFP8 = 4 };
enum moe_reduce { MOE_REDUCE_ATOMIC = 1, MOE_REDUCE_SEPARATE = 2, MOE_REDUCE_PER_K = 3 };
enum moe_router_weight_on { MOE_ROUTER_WEIGHT_ON_OUTPUT = 1, MOE_ROUTER_WEIGHT_ON_INPUT = 2 };

enum moe_mx_mode { MOE_MX_FLOOR = 1, MOE_MX_RCEIL = 2, MOE_MX_EVEN = 3 };
enum moe_e8m0_edges { MOE_E8M0_OCP = 1, MOE_E8M0_TRITON = 2 };

typedef struct moe_quant {
  int32_t weight_format;  /* enum moe_weight_format */
  int32_t act_format;     /* enum moe_act_format */
  int32_t fnuz;           /* 1: fp8 codes are e4m3fnuz */
  float qmax;             /* activation range: scale = max(amax, amax_floor) / qmax (0: the flavour's max finite) */
  float amax_floor;
  int32_t scale_pow2;     /* 1: activation scales rounded up to powers of two (ue8m0) */
  int32_t mx_mode;        /* enum moe_mx_mode */
  int32_t e8m0_edges;     /* enum moe_e8m0_edges */
} moe_quant;

typedef struct moe_problem {
  int64_t tokens, hidden, inter_local, experts, local_experts, first_local_expert, topk;
  int64_t n_shared, shared_inter_local;  /* shared experts (added with weight 1 on ep_rank 0) */
  int32_t ep_rank;
  int32_t activation, layout;            /* enum moe_activation, enum moe_layout */
  float swiglu_alpha, swiglu_limit;
  int32_t clamp_shared, biases, router_weight_on;
  moe_quant quant, shared_quant;
  int32_t input_dtype, intermediate_dtype, output_dtype;  /* enum moe_dtype */
  int32_t reduce, split_k;
} moe_problem;

typedef struct moe_tensor {
  const char* name;
  int32_t dtype;          /* enum moe_dtype */
  int32_t ndim;
  const int64_t* shape;   /* row-major; E2M1X2: last dimension in bytes */
  void* data;             /* host memory; const in run() except the output */
  size_t nbytes;
} moe_tensor;

typedef struct moe_plugin_api {
  uint32_t abi_version;   /* MOE_PLUGIN_ABI_VERSION the plugin was built against */
  uint32_t struct_size;   /* sizeof(moe_plugin_api) in the plugin's build */
  const char* id;         /* kernel id in reports, e.g. "acme-moe" */
  const char* version;    /* the kernel's own version string */
  /* 1 if supported; else 0 with a reason a user can act on written into reason. */
  int (*supports)(const moe_problem* p, char* reason, size_t reason_len);
  /* May convert the working tensors in place (may be NULL: nothing to prepare). */
  int (*prepare)(const moe_problem* p, moe_tensor* tensors, int32_t n_tensors, char* err, size_t err_len);
  /* Computes the output; writes the name of the path it took into variant. */
  int (*run)(const moe_problem* p, const moe_tensor* tensors, int32_t n_tensors, const int32_t* topk_ids,
             const float* topk_weights, int32_t k, moe_tensor* out, char* variant, size_t variant_len, char* err,
             size_t err_len);
  /* 1 if two runs on the same inputs give the same bits (may be NULL: deterministic). Return 0 where the result may
   * differ in the last bits between runs (float atomics): the harness then skips its bitwise rerun and linearity
   * probes for that problem instead of failing them. */
  int (*deterministic)(const moe_problem* p);
} moe_plugin_api;

typedef const moe_plugin_api* (*moe_plugin_entry_fn)(uint32_t host_abi_version);

/* Optional: where the kernel rounds for problem p (docs/numerics.md "The rounding points of the kernel contract"),
 * as the contract's text form: the points it fixes, "point=value" joined by commas (gate_up, act, slot, reduce,
 * shared, output; e.g. "gate_up=bf16,slot=bf16"), or "default" for none. case_contract is the case's own contract in
 * the same form (its points that differ from the defaults), since moe_problem does not carry every point. Write
 * NUL-terminated text into `text` (at most text_len bytes) and return 0; non-zero with a message in `text`: the case
 * is an error. The case decides every point not named, unless it pins its contract. Without the symbol the plugin is
 * judged as keeping h, each slot and the top-k sum in fp32 ("gate_up=f32,slot=f32,reduce=f32": moe_problem does not
 * tell it otherwise) and following the case's other points. Export it like the entry (MOE_PLUGIN_EXPORT). */
#define MOE_PLUGIN_ROUNDING_CONTRACT_SYMBOL "moe_plugin_rounding_contract"
typedef int (*moe_plugin_rounding_contract_fn)(const moe_problem* p, const char* case_contract, char* text,
                                               size_t text_len);

#ifdef __cplusplus
}
#endif
#endif /* MOE_PLUGIN_H */
