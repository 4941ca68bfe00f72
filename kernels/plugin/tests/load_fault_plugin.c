/* A plugin whose load-time code ends the process that loads it: an ELF constructor that calls _exit(42)
 * (LOAD_FAULT 1) or raises SIGSEGV (LOAD_FAULT 2) inside dlopen, before the harness calls anything of it. The loader
 * must refuse it by name (kernels/plugin/plugin_probe.hpp), never end with its status. */
#include <signal.h>
#include <unistd.h>

#include "kernels/plugin/moe_plugin.h"

__attribute__((constructor)) static void load_fault(void) {
#if LOAD_FAULT == 1
  _exit(42);
#else
  raise(SIGSEGV);
#endif
}

MOE_PLUGIN_EXPORT const moe_plugin_api* moe_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return 0;
}
