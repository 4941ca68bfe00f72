/* A library whose moe_plugin_entry is data, not a function: calling it would jump into a non-executable page. The
 * loader must refuse it before the call. */
#include "kernels/plugin/moe_plugin.h"

MOE_PLUGIN_EXPORT int moe_plugin_entry[16] = {1, 2, 3};
