/* A plugin whose load-time code ends or blocks the process that loads it: an ELF constructor that calls _exit(42)
 * (LOAD_FAULT 1), raises SIGSEGV (2), calls exit(0) (3: a status that must not pass for a load) or never returns (4)
 * inside dlopen, before the harness calls anything of it. The loader must load it in a probe process only
 * (kernels/plugin/plugin_probe.hpp) and make each of its cases an error record; the run goes on, never ending with
 * its status. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "kernels/plugin/moe_plugin.h"

__attribute__((constructor)) static void load_fault(void) {
#if LOAD_FAULT == 1
  _exit(42);
#elif LOAD_FAULT == 2
  raise(SIGSEGV);
#elif LOAD_FAULT == 3
  exit(0);
#else
  for (;;) pause();
#endif
}

MOE_PLUGIN_EXPORT const moe_plugin_api* moe_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return 0;
}
