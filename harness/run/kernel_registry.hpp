// The kernels this build can test: the host contract kernel always, GPU kernels where the build has them.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/gpu/dispatch_options.hpp"
#include "kernels/kernel_under_test.hpp"
#include "kernels/plugin/plugin_probe.hpp"

namespace moe {

// dispatch: the GPU kernels' A/B switches (`--dispatch`); kernels without a dispatch choice ignore them.
std::vector<std::unique_ptr<KernelUnderTest>> make_kernels(const std::vector<std::string>& ids, double host_budget,
                                                           const gpu::DispatchOptions& dispatch = {});
std::string available_kernel_ids();
// One kernel by its report id: host-contract, gpu-fused-moe, or a mutant of the catalog as KERNEL~MUTANT
// (kernels/mutants/mutation.hpp: an input/output mutant is a MutantKernel around the clean kernel, an in-kernel
// one the kernel built with it; gpu-fused-moe~none is the GPU mutant build without a bug). Short names allowed.
// dispatch: as for make_kernels (the mutant build has no dispatch choice and ignores them).
std::unique_ptr<KernelUnderTest> make_kernel_by_id(const std::string& id, double host_budget,
                                                   const gpu::DispatchOptions& dispatch = {});
// A plugin library by path, or PATH~MUTANT: one of the catalog's input/output mutants around it (MutantKernel;
// an in-kernel mutant needs the kernel's inside and is bad input here). The library is loaded first in a probe
// process (kernels/plugin/plugin_probe.hpp): when loading it exits, dies of a signal or hangs there, the answer is an
// UnloadablePlugin (kernels/plugin/unloadable_plugin.hpp), never loaded here, whose cases are error records; `known`
// is such a failure found before (the supervisor's probe, passed to its workers), so that no process probes again.
std::unique_ptr<KernelUnderTest> make_plugin_kernel(const std::string& spec,
                                                    const std::optional<PluginLoadFailure>& known = std::nullopt);
// The full id for a short name: `host` -> `host-contract`, `gpu` -> `gpu-fused-moe`; any other name unchanged.
// Every command that takes a kernel name (run, merge, compare, gate) spells it through this.
std::string canonical_kernel_id(const std::string& name);
// Whether `id` is a kernel of this harness in some build (a CPU-only build still reads the reports of GPU builds).
bool is_builtin_kernel_id(const std::string& id);
// Kernel names given to a command that reads reports (merge, gate): each spelled through canonical_kernel_id; a
// name that is neither a kernel of this harness nor in `known` (the kernels the reports name) is bad input naming
// `key`, so that a typo is never read as "that kernel is missing".
std::vector<std::string> resolve_kernel_names(const std::vector<std::string>& names,
                                              const std::vector<std::string>& known, const std::string& key);
// Registration: two kernels with the same id in one run (a plugin given twice, a plugin named like a built-in
// kernel) are bad input, since their tests and report records would be indistinguishable.
void check_unique_kernel_ids(const std::vector<KernelUnderTest*>& kernels);

}  // namespace moe
