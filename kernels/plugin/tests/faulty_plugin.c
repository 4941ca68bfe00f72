/* Kernels under development as they fail in the field, for the fault-containment tests: the example plugin's
 * correct kernel on every case but those of FAULT_TOKENS tokens, where run() does what FAULT_KIND says:
 *   1 segfault (writes through a wild pointer)     2 abort()            3 exit(0)
 *   4 loops forever                                 5 throws a C++ exception through the C ABI (faulty_throw.cpp)
 *   6 allocates and touches memory without bound
 * Each says so on stderr first, so the crash record's stderr tail can be checked. */
#define moe_plugin_entry example_plugin_entry /* the example's own entry point stays unexported and unused */
#include "kernels/plugin/example/example_plugin.c"
#undef moe_plugin_entry

#include <stdio.h>
#include <unistd.h>

#ifndef FAULT_TOKENS
#define FAULT_TOKENS 3
#endif

void faulty_plugin_throw(void); /* faulty_throw.cpp */

static const char* const kNames[] = {"", "segfault", "abort", "exit0", "loop", "throw", "alloc"};

static int faulty_run(const moe_problem* p, const moe_tensor* ts, int32_t n, const int32_t* ids, const float* weights,
                      int32_t k, moe_tensor* out, char* variant, size_t variant_len, char* err, size_t err_len) {
  if (p->tokens == FAULT_TOKENS) {
    fprintf(stderr, "faulty plugin: %s on a %lld-token case\n", kNames[FAULT_KIND], (long long)p->tokens);
    fflush(stderr);
#if FAULT_KIND == 1
    volatile int* wild = (volatile int*)(uintptr_t)16;
    *wild = 1;
#elif FAULT_KIND == 2
    abort();
#elif FAULT_KIND == 3
    exit(0);
#elif FAULT_KIND == 4
    for (volatile unsigned long spin = 0;; ++spin) {
    }
#elif FAULT_KIND == 5
    faulty_plugin_throw();
#elif FAULT_KIND == 6
    for (;;) {
      const size_t chunk = (size_t)64 << 20;
      char* b = malloc(chunk);
      if (!b) {
        snprintf(err, err_len, "faulty plugin: malloc failed");
        return 1;
      }
      memset(b, 1, chunk); /* resident, not just reserved */
    }
#endif
  }
  return run(p, ts, n, ids, weights, k, out, variant, variant_len, err, err_len);
}

#define FAULTY_ID2(k) "faulty-" #k
#define FAULTY_ID(k) FAULTY_ID2(k)

static const moe_plugin_api kFaultyApi = {
    MOE_PLUGIN_ABI_VERSION, sizeof(moe_plugin_api), FAULTY_ID(FAULT_KIND), "1.0", supports, NULL, faulty_run,
    deterministic,
};

MOE_PLUGIN_EXPORT const moe_plugin_api* moe_plugin_entry(uint32_t host_abi_version) {
  return host_abi_version == MOE_PLUGIN_ABI_VERSION ? &kFaultyApi : NULL;
}
