/* A plugin whose strings are what the loader must check, chosen by PLUGIN_STRINGS:
 *   1: an id that is not UTF-8 (bytes 0xFF 0xFE);   2: a version with an overlong encoding (0xC0 0x80);
 *   3: an id equal to a built-in kernel's (host-contract);   4: a valid id and version, and a decline reason that is
 *   not UTF-8 (byte 0xFF), which the report must carry readably.
 * It declines every case, so nothing of it runs. */
#include <string.h>

#include "kernels/plugin/moe_plugin.h"

#if PLUGIN_STRINGS == 1
#define PLUGIN_ID "bad-\xff\xfe-id"
#define PLUGIN_VERSION "1"
#elif PLUGIN_STRINGS == 2
#define PLUGIN_ID "strings-plugin"
#define PLUGIN_VERSION "1\xc0\x80"
#elif PLUGIN_STRINGS == 3
#define PLUGIN_ID "host-contract"
#define PLUGIN_VERSION "1"
#else
#define PLUGIN_ID "strings-plugin"
#define PLUGIN_VERSION "1"
#endif

static int supports(const moe_problem* p, char* reason, size_t n) {
  const char* why = "declined \xff here";
  strncpy(reason, why, n - 1);
  return 0;
}
static int run(const moe_problem* p, const moe_tensor* t, int32_t n, const int32_t* i, const float* w, int32_t k,
               moe_tensor* o, char* v, size_t vl, char* e, size_t el) { return 1; }
static const moe_plugin_api kApi = {MOE_PLUGIN_ABI_VERSION, sizeof(moe_plugin_api), PLUGIN_ID, PLUGIN_VERSION,
                                    supports, 0, run, 0};
MOE_PLUGIN_EXPORT const moe_plugin_api* moe_plugin_entry(uint32_t host_abi_version) { return &kApi; }
