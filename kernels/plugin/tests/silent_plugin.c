/* A plugin that accepts every case and returns success without writing its output: every case it runs must FAIL
 * on unwritten elements (the harness pre-fills the output with a NaN sentinel), never pass or be a harness error. */
#include <string.h>

#include "kernels/plugin/moe_plugin.h"

static int supports(const moe_problem* p, char* reason, size_t n) { return 1; }
static int run(const moe_problem* p, const moe_tensor* t, int32_t n, const int32_t* ids, const float* w, int32_t k,
               moe_tensor* out, char* variant, size_t variant_len, char* err, size_t err_len) {
  strncpy(variant, "silent/writes-nothing", variant_len - 1);
  return 0;
}
static const moe_plugin_api kApi = {MOE_PLUGIN_ABI_VERSION, sizeof(moe_plugin_api), "silent-plugin", "1", supports, 0, run, 0};
MOE_PLUGIN_EXPORT const moe_plugin_api* moe_plugin_entry(uint32_t host_abi_version) { return &kApi; }
