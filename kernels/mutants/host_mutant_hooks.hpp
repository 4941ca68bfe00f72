// The in-kernel mutants of the host contract kernel (mutation.hpp: mutant_level(m) == in_kernel): each overrides one
// of the kernel's named hook points (kernels/host/host_kernel_hooks.hpp), so the kernel's source carries no mutant.
#pragma once
#include <memory>

#include "kernels/host/host_kernel_hooks.hpp"
#include "kernels/mutants/mutation_id.hpp"

namespace moe {

// The hooks that give the host contract kernel bug m; the plain (correct) hooks for none. Throws for a mutant that
// is not an in-kernel one of the host kernel (the wrapper applies the input/output ones; the GPU-only ones have no
// host code).
std::unique_ptr<HostKernelHooks> host_mutant_hooks(Mutation m);

}  // namespace moe
