// Device faults of kernels under development, in the GPU kernels' mutant build only (kernels/moe/fused_moe.hip
// includes this under MOE_GPU_MUTANTS): a write through a wild pointer, which the runtime reports as an illegal
// memory access and which leaves the context unusable (a sticky error), and a kernel that never returns. Each runs
// before the real kernels of a launch whose args carry it; the adapter passes it only on a case of the trigger seed
// (kernels/mutants/mutation.hpp kFaultMutantSeed). They exist to prove that the harness contains such faults: one
// error case, a fresh worker and context for the next (docs/reliability.md "Fault containment", ci/gpu-fault-containment).
#pragma once
#include <cstdint>

#include "kernels/moe/fused_moe.hpp"
#include "kernels/mutants/mutant_hooks.hpp"
#include "kernels/runtime/gpu_check.hpp"
#include "kernels/runtime/hip_compat.hpp"

namespace moe::gpu {
namespace {

__global__ void mutant_wild_write_kernel(std::uintptr_t address) {
  *reinterpret_cast<volatile float*>(address + 4 * threadIdx.x) = 1.0f;
}

// acc is zeroed before every launch and written by no one while this runs: the loop never ends.
__global__ void mutant_spin_kernel(const volatile float* acc) {
  while (acc[0] == 0.0f) {
  }
}

void launch_fault_mutant(const FusedMoeArgs& a) {
  if (MOE_MUT(illegal_memory_access)) {
    mutant_wild_write_kernel<<<dim3(1), dim3(32), 0, MOE_LAUNCH_STREAM>>>(std::uintptr_t(64));  // the first page is never mapped
    MOE_GPU_CHECK_LAUNCH("mutant_wild_write_kernel (fault mutant illegal_memory_access)");
  }
  if (MOE_MUT(spin_forever)) {
    mutant_spin_kernel<<<dim3(1), dim3(1), 0, MOE_LAUNCH_STREAM>>>(a.acc);
    MOE_GPU_CHECK_LAUNCH("mutant_spin_kernel (fault mutant spin_forever)");
  }
}

}  // namespace
}  // namespace moe::gpu
