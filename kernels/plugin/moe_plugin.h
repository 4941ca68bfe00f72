/* moe-harness kernel plugin ABI (C). A kernel built outside this repository is judged by
 *   moe-harness run --plugin /path/to/libmykernel.so [--suite S] [--filter GLOB]...
 * The harness dlopen()s the library from that explicit path (never a search path) and calls
 *   const moe_plugin_api* moe_plugin_entry(uint32_t host_abi_version);
 * with its own MOE_PLUGIN_ABI_VERSION. A plugin returns the table of the newest version it serves that is not above
 * the host's (a plugin may serve several), or NULL; on NULL the harness asks again with each older version down to
 * MOE_PLUGIN_ABI_MIN_VERSION, so a plugin built against version 1 that only answers 1 still loads. The harness
 * refuses the plugin, with a message naming both numbers, unless the table's abi_version lies between
 * MOE_PLUGIN_ABI_MIN_VERSION and the version it was asked for, and its struct_size covers that version's table
 * (MOE_PLUGIN_API_V1_SIZE, MOE_PLUGIN_API_V2_SIZE).
 *
 * Data: the harness hands prepare() the tensors of its WORKING copy of the checkpoint in host memory (never the
 * pristine tensors the reference reads; converting or shuffling them in place there is allowed), and run() those
 * tensors, the reference routing (topk ids are GLOBAL expert ids; local expert = id - first_local_expert, skip ids
 * outside the local range), and an output buffer [tokens, hidden] in output_dtype pre-filled with a NaN sentinel:
 * every element must be written. Tensor names and layouts are the checkpoint's (docs/export.md): x [T,H];
 * router_logits [T,E]; w13 [E_l, 2*I_l, H] (rows in `layout`); w2 [E_l, H, I_l]; w13_scale, w2_scale,
 * w13_bias [E_l, 2*I_l] f32, w2_bias [E_l, H] f32; shared experts prefixed "shared_".
 *
 * Device memory (version 2, memory = MOE_MEMORY_DEVICE; GPU builds of the harness only, a host build declines every
 * case of such a plugin saying it needs a GPU build): after prepare() the harness uploads the working tensors to
 * the current device ONCE per case and keeps them there for every run_device() call of that case (the verdict run,
 * the timed repeats, the probes' reruns); the routing is uploaded for each call (the probes change the weights).
 * run_device() gets the same names, shapes and dtypes with device pointers in data, topk_ids and topk_weights in
 * device memory, the output as a device buffer pre-filled with the NaN sentinel, and a moe_device_context with the
 * stream and the device ordinal. It enqueues its work on that stream and may return before it finishes; the
 * harness synchronizes the stream and checks the runtime's errors. The harness times only run_device(): device
 * events recorded on the stream around it, two untimed warm-up calls, then the median of five, in microseconds
 * (kernel_us); the uploads are the report's `upload` phase. A plugin may keep scratch memory across calls.
 *
 * Return 0 for success; otherwise write a message into err (NUL-terminated, at most err_len bytes) and return
 * non-zero: the case is reported as an error of that case, not a crash of the run. All strings are UTF-8.
 *
 * The rounding contract (where the kernel rounds): version 2 tables carry it (rounding_contract, may be NULL);
 * without it, in either version, the loader looks up the optional symbol moe_plugin_rounding_contract (a plugin
 * without either is judged as keeping h, each slot and the top-k sum in fp32, see moe_plugin_rounding_contract_fn).
 *
 * Version history:
 *   1 (2026-11-30) first version: host memory only.
 *   1 (2026-12-01) the optional symbol moe_plugin_rounding_contract (the table unchanged).
 *   2 (2026-12-01) the table grows memory, run_device and rounding_contract (struct_size covers them); the host
 *     asks for older versions when a plugin declines its own. Version 1 tables load unchanged.
 */
#ifndef MOE_PLUGIN_H
#define MOE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MOE_PLUGIN_ABI_VERSION 2u
#define MOE_PLUGIN_ABI_MIN_VERSION 1u /* the oldest version this harness still loads */
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
  void* data;             /* host memory (device memory in run_device); const except the output */
  size_t nbytes;
} moe_tensor;

/* Where the kernel rounds for problem p (docs/numerics.md "The rounding points of the kernel contract"),
 * as the contract's text form: the points it fixes, "point=value" joined by commas (gate_up, act, slot, reduce,
 * shared, output; e.g. "gate_up=bf16,slot=bf16"), or "default" for none. case_contract is the case's own contract in
 * the same form (its points that differ from the defaults), since moe_problem does not carry every point. Write
 * NUL-terminated text into `text` (at most text_len bytes) and return 0; non-zero with a message in `text`: the case
 * is an error. The case decides every point not named, unless it pins its contract. Without the symbol the plugin is
 * judged as keeping h, each slot and the top-k sum in fp32 ("gate_up=f32,slot=f32,reduce=f32": moe_problem does not
 * tell it otherwise) and following the case's other points. As the optional symbol, export it like the entry (MOE_PLUGIN_EXPORT). */
#define MOE_PLUGIN_ROUNDING_CONTRACT_SYMBOL "moe_plugin_rounding_contract"
typedef int (*moe_plugin_rounding_contract_fn)(const moe_problem* p, const char* case_contract, char* text,
                                               size_t text_len);

enum moe_memory { MOE_MEMORY_HOST = 0, MOE_MEMORY_DEVICE = 1 }; /* 0: a version 2 table that leaves it out is host */

/* What run_device() runs on (version 2). */
typedef struct moe_device_context {
  uint32_t struct_size;   /* sizeof(moe_device_context) in the harness's build */
  int32_t device;         /* the device ordinal the buffers live on (the current device during the call) */
  void* stream;           /* cudaStream_t or hipStream_t: enqueue all work here */
} moe_device_context;

typedef struct moe_plugin_api {
  uint32_t abi_version;   /* MOE_PLUGIN_ABI_VERSION the plugin was built against */
  uint32_t struct_size;   /* sizeof(moe_plugin_api) in the plugin's build */
  const char* id;         /* kernel id in reports, e.g. "acme-moe" */
  const char* version;    /* the kernel's own version string */
  /* 1 if supported; else 0 with a reason a user can act on written into reason. */
  int (*supports)(const moe_problem* p, char* reason, size_t reason_len);
  /* May convert the working tensors in place (may be NULL: nothing to prepare). */
  int (*prepare)(const moe_problem* p, moe_tensor* tensors, int32_t n_tensors, char* err, size_t err_len);
  /* Computes the output in host memory; writes the name of the path it took into variant. NULL in device
   * plugins (version 2, memory MOE_MEMORY_DEVICE). */
  int (*run)(const moe_problem* p, const moe_tensor* tensors, int32_t n_tensors, const int32_t* topk_ids,
             const float* topk_weights, int32_t k, moe_tensor* out, char* variant, size_t variant_len, char* err,
             size_t err_len);
  /* 1 if two runs on the same inputs give the same bits (may be NULL: deterministic). Return 0 where the result may
   * differ in the last bits between runs (float atomics): the harness then skips its bitwise rerun and linearity
   * probes for that problem instead of failing them. */
  int (*deterministic)(const moe_problem* p);
  /* ---- version 2: read only when abi_version >= 2 ---- */
  int32_t memory;         /* enum moe_memory: where run's or run_device's tensors live */
  /* Device plugins (memory MOE_MEMORY_DEVICE) fill this instead of run: run's arguments with device pointers, and
   * the stream and device to run on (see the top of this file). Host plugins leave it NULL. */
  int (*run_device)(const moe_problem* p, const moe_tensor* tensors, int32_t n_tensors, const int32_t* topk_ids,
                    const float* topk_weights, int32_t k, moe_tensor* out, const moe_device_context* ctx,
                    char* variant, size_t variant_len, char* err, size_t err_len);
  /* May be NULL: then the optional symbol moe_plugin_rounding_contract, if exported, else the fp32 default. */
  moe_plugin_rounding_contract_fn rounding_contract;
} moe_plugin_api;

/* The table's size in each version (struct_size must be at least the declared version's). */
#define MOE_PLUGIN_API_V1_SIZE offsetof(moe_plugin_api, memory)
#define MOE_PLUGIN_API_V2_SIZE sizeof(moe_plugin_api)

typedef const moe_plugin_api* (*moe_plugin_entry_fn)(uint32_t host_abi_version);


#ifdef __cplusplus
}
#endif
#endif /* MOE_PLUGIN_H */
