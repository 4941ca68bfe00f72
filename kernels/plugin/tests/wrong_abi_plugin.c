/* A plugin built against a future ABI: the harness must refuse it with both version numbers. */
#include "kernels/plugin/moe_plugin.h"

static int supports(const moe_problem* p, char* r, size_t n) { return 1; }
static int run(const moe_problem* p, const moe_tensor* t, int32_t n, const int32_t* i, const float* w, int32_t k,
               moe_tensor* o, char* v, size_t vl, char* e, size_t el) { return 0; }
static const moe_plugin_api kApi = {999u, sizeof(moe_plugin_api), "future", "9", supports, 0, run, 0};
MOE_PLUGIN_EXPORT const moe_plugin_api* moe_plugin_entry(uint32_t host_abi_version) { return &kApi; }
