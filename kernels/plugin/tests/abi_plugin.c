/* Plugins for the ABI negotiation tests (plugin_abi_test.cpp, check_plugin.py): the example's computation
 * (kernels/plugin/example/example_plugin.c, included without its table) behind the tables of one mode:
 *   ABI_MODE_V1_ONLY      a version 1 plugin as built against version 1: abi 1, the version 1 table size, and it
 *                         answers only a host of version 1 (a version 2 host must ask again with 1);
 *   ABI_MODE_BOTH         serves version 1 (no rounding contract: judged as fp32 stages) and version 2 (host memory,
 *                         the contract in the table: gate_up=bf16,slot=bf16, which this build's rounding is);
 *   ABI_MODE_SHORT        declares version 2 with the version 1 table size;
 *   ABI_MODE_NEWER        declares version 3 to any host;
 *   ABI_MODE_BAD_MEMORY   version 2 with a memory kind that does not exist;
 *   ABI_MODE_DEVICE       version 2, device memory; run_device reports an error instead of computing (a host build
 *                         must decline it before calling it);
 *   ABI_MODE_DEVICE_NO_RUN version 2, device memory without run_device.
 */
#define ABI_MODE_V1_ONLY 1
#define ABI_MODE_BOTH 2
#define ABI_MODE_SHORT 3
#define ABI_MODE_NEWER 4
#define ABI_MODE_BAD_MEMORY 5
#define ABI_MODE_DEVICE 6
#define ABI_MODE_DEVICE_NO_RUN 7

#define EXAMPLE_PLUGIN_NO_TABLE
#if ABI_MODE == ABI_MODE_BOTH
#define EXAMPLE_PLUGIN_ROUNDS_LIKE_VLLM
#define EXAMPLE_PLUGIN_NO_CONTRACT_SYMBOL
#endif
#include "kernels/plugin/example/example_plugin.c"


static int v2_contract(const moe_problem* p, const char* case_contract, char* text, size_t text_len) {
  (void)p;
  (void)case_contract;
  snprintf(text, text_len, "gate_up=bf16,slot=bf16,reduce=f32");
  return 0;
}

static int run_device(const moe_problem* p, const moe_tensor* ts, int32_t n, const int32_t* ids, const float* w,
                      int32_t k, moe_tensor* out, const moe_device_context* ctx, char* variant, size_t variant_len,
                      char* err, size_t err_len) {
  snprintf(err, err_len, "abi test plugin: run_device is a stub and computes nothing");
  return 1;
}

static const moe_plugin_api kV1 = {1u, MOE_PLUGIN_API_V1_SIZE, "abi-plugin", "1.0", supports, NULL, run, NULL};
#if ABI_MODE == ABI_MODE_SHORT
#define V2_SIZE MOE_PLUGIN_API_V1_SIZE
#else
#define V2_SIZE sizeof(moe_plugin_api)
#endif
#if ABI_MODE == ABI_MODE_DEVICE || ABI_MODE == ABI_MODE_DEVICE_NO_RUN
#define V2_RUN NULL
#define V2_MEMORY MOE_MEMORY_DEVICE
#elif ABI_MODE == ABI_MODE_BAD_MEMORY
#define V2_RUN run
#define V2_MEMORY 7
#else
#define V2_RUN run
#define V2_MEMORY MOE_MEMORY_HOST
#endif
static const moe_plugin_api kV2 = {
    .abi_version = ABI_MODE == ABI_MODE_NEWER ? 3u : 2u, .struct_size = V2_SIZE, .id = "abi-plugin", .version = "2.0",
    .supports = supports, .run = V2_RUN, .memory = V2_MEMORY,
    .run_device = ABI_MODE == ABI_MODE_DEVICE ? run_device : NULL,
    .rounding_contract = ABI_MODE == ABI_MODE_BOTH ? v2_contract : NULL,
};

MOE_PLUGIN_EXPORT const moe_plugin_api* moe_plugin_entry(uint32_t host_abi_version) {
#if ABI_MODE == ABI_MODE_V1_ONLY
  return host_abi_version == 1u ? &kV1 : NULL;
#elif ABI_MODE == ABI_MODE_BOTH
  return host_abi_version >= 2u ? &kV2 : host_abi_version == 1u ? &kV1 : NULL;
#else
  (void)kV1;
  return &kV2;
#endif
}
