#include "harness/run/kernel_registry.hpp"

#include <algorithm>
#include <cstdio>

#include "fixtures/error.hpp"
#include "kernels/host/host_contract_kernel.hpp"
#include "kernels/mutants/host_mutant_hooks.hpp"
#include "kernels/mutants/mutant_kernel.hpp"
#include "kernels/plugin/plugin_kernel.hpp"
#include "kernels/plugin/unloadable_plugin.hpp"
#ifdef MOE_HAVE_GPU_RUNTIME
#include "kernels/gpu/gpu_fused_moe_kernel.hpp"
#endif

namespace moe {

#ifdef MOE_HAVE_GPU_RUNTIME
std::string available_kernel_ids() { return "host-contract, gpu-fused-moe"; }
#else
std::string available_kernel_ids() { return "host-contract (this build has no GPU kernels)"; }
#endif

std::string canonical_kernel_id(const std::string& name) {
  return name == "host" ? std::string("host-contract") : name == "gpu" ? std::string("gpu-fused-moe") : name;
}

bool is_builtin_kernel_id(const std::string& id) { return id == "host-contract" || id == "gpu-fused-moe"; }

std::vector<std::string> resolve_kernel_names(const std::vector<std::string>& names,
                                              const std::vector<std::string>& known, const std::string& key) {
  std::vector<std::string> out;
  for (const std::string& raw : names) {
    const std::string id = canonical_kernel_id(raw);
    if (!is_builtin_kernel_id(id) && std::find(known.begin(), known.end(), id) == known.end()) {
      std::string listed;
      for (const auto& k : known) listed += (listed.empty() ? "" : ", ") + k;
      throw_bad_input("command line", key, "unknown kernel '" + raw + "'",
                      "use host-contract, gpu-fused-moe (or host, gpu) or a kernel the report names" +
                          (listed.empty() ? std::string(" (it names none)") : " (" + listed + ")"));
    }
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  return out;
}

void check_unique_kernel_ids(const std::vector<KernelUnderTest*>& kernels) {
  for (std::size_t i = 0; i < kernels.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (kernels[i]->id() == kernels[j]->id())
        throw_bad_input("command line", "--plugin", "two kernels with the id '" + kernels[i]->id() + "' in one run: version " +
                                                        kernels[j]->version() + " and version " + kernels[i]->version(),
                        "give each plugin once, and give a plugin an id of its own (not host-contract or gpu-fused-moe)");
}

namespace {
Mutation parse_mutant_of(const std::string& name, const std::string& spec, const std::string& key) {
  const auto parsed = parse_mutation(name);
  if (!parsed)
    throw_bad_input("command line", key, "unknown mutant '" + name + "' in '" + spec + "'",
                    "use one of: " + mutation_names());
  return *parsed;
}

// host-contract@ROUNDS[@DECLARES]: the host kernel rounding at the points ROUNDS names whatever the problem it is
// handed says (gate_up=f32: never rounds h), and declaring DECLARES (default: ROUNDS, an honest kernel); `default`
// names no point (kernels/host/host_contract_kernel.hpp).
std::unique_ptr<KernelUnderTest> host_rounding_variant(const std::string& id, double budget) {
  const std::string spec = id.substr(id.find('@') + 1);
  const auto at = spec.find('@');
  HostRounding r;
  r.rounds = parse_rounding_contract_or_throw(spec.substr(0, at), "command line", "--kernel");
  r.declares = at == std::string::npos ? r.rounds
                                       : parse_rounding_contract_or_throw(spec.substr(at + 1), "command line", "--kernel");
  if (r.rounds.output)
    throw_bad_input("command line", "--kernel", "'" + id + "' rounds its output to another dtype than the case's",
                    "leave output out of the points the kernel rounds at: the output dtype is the case's");
  return std::make_unique<HostContractKernel>(budget, nullptr, std::move(r), id);
}
}  // namespace

std::unique_ptr<KernelUnderTest> make_kernel_by_id(const std::string& raw, double host_budget,
                                                  const gpu::DispatchOptions& dispatch) {
  const double budget = host_budget > 0 ? host_budget : HostContractKernel::kDefaultFlopBudget;
  const std::string id = canonical_kernel_id(raw);
  const auto tilde = id.find('~');
  const std::string base = id.substr(0, tilde);
  const Mutation m =
      tilde == std::string::npos ? Mutation::none : parse_mutant_of(id.substr(tilde + 1), id, "--kernel");
  const bool io = m != Mutation::none && mutant_level(m) == MutantLevel::io;
  if (tilde == std::string::npos && base.rfind("host-contract@", 0) == 0) return host_rounding_variant(base, budget);
  if (base == "host-contract" && (tilde == std::string::npos || m != Mutation::none) && !gpu_only(m)) {
    if (tilde == std::string::npos) return std::make_unique<HostContractKernel>(budget);
    // an input/output mutant around the clean kernel; an in-kernel one through the kernel's hook points
    return std::make_unique<MutantKernel>(
        std::make_unique<HostContractKernel>(budget, io ? nullptr : host_mutant_hooks(m)), m);
  }
#ifdef MOE_HAVE_GPU_RUNTIME
  if (base == "gpu-fused-moe") {
    if (tilde == std::string::npos) return std::make_unique<GpuFusedMoeKernel>(dispatch);
    if (m == Mutation::none) return std::make_unique<GpuFusedMoeKernel>(GpuFusedMoeKernel::MutantBuild{});
    // around the mutant build without a bug: the selftest's liveness baseline (gpu-fused-moe~none)
    if (io)
      return std::make_unique<MutantKernel>(std::make_unique<GpuFusedMoeKernel>(GpuFusedMoeKernel::MutantBuild{}), m,
                                            id);
    if (host_only(m))
      throw_bad_input("command line", "--kernel", "mutant '" + std::string(mutation_name(m)) + "' exists only in the "
                      "host contract kernel's hook points", "use host-contract~" + std::string(mutation_name(m)));
    return std::make_unique<GpuFusedMoeKernel>(m);
  }
#else
  if (base == "gpu-fused-moe")
    throw_bad_input("command line", "--kernel", "this build has no GPU kernels",
                    "configure with `cmake --preset cuda` or `--preset hip` to build them");
#endif
  throw_bad_input("command line", "--kernel", "unknown kernel '" + id + "'",
                  "use one of: " + available_kernel_ids() +
                      " (or host, gpu, all; a mutant as KERNEL~MUTANT; host-contract@ROUNDS[@DECLARES] for the host "
                      "kernel rounding at more points)");
}

std::unique_ptr<KernelUnderTest> make_plugin_kernel(const std::string& spec, const std::optional<PluginLoadFailure>& known) {
  const auto tilde = spec.rfind('~');
  const bool mutant = tilde != std::string::npos && spec.find('/', tilde) == std::string::npos;
  const std::string path = mutant ? spec.substr(0, tilde) : spec;
  Mutation m = Mutation::none;
  if (mutant) {
    m = parse_mutant_of(spec.substr(tilde + 1), spec, "--plugin");
    if (m != Mutation::none && mutant_level(m) != MutantLevel::io)
      throw_bad_input("command line", "--plugin",
                      "mutant '" + std::string(mutation_name(m)) + "' of '" + spec + "' needs the kernel's inside (" +
                          std::string(mutant_level_reason(m)) + ")",
                      "give a plugin an input/output mutant of the catalog (kernels/mutants/mutation.cpp, level io)");
  }
  std::optional<PluginLoadFailure> failed = known;
  if (!failed) {
    check_plugin_path(path);  // not a plugin at all: bad input before any work
    failed = probe_plugin_load(path);
    if (failed)
      std::fprintf(stderr, "moe-harness: --plugin %s: loading the library %s (in a probe process): it is not loaded, "
                   "and each of its cases is an error record\n", path.c_str(), failed->how.c_str());
  }
  if (failed) return std::make_unique<UnloadablePlugin>(path, *failed, spec);
  auto plugin = std::make_unique<PluginKernel>(path, MOE_PLUGIN_ABI_VERSION, /*probed=*/true);
  if (!mutant) return plugin;
  return std::make_unique<MutantKernel>(std::move(plugin), m);
}

std::vector<std::unique_ptr<KernelUnderTest>> make_kernels(const std::vector<std::string>& ids, double host_budget,
                                                           const gpu::DispatchOptions& dispatch) {
  std::vector<std::unique_ptr<KernelUnderTest>> out;
  const double budget = host_budget > 0 ? host_budget : HostContractKernel::kDefaultFlopBudget;
  auto want = [&](const std::string& id) {
    for (auto& i : ids) if (canonical_kernel_id(i) == id || i == "all") return true;
    return ids.empty();
  };
  if (want("host-contract")) out.push_back(std::make_unique<HostContractKernel>(budget));
#ifdef MOE_HAVE_GPU_RUNTIME
  if (want("gpu-fused-moe")) out.push_back(std::make_unique<GpuFusedMoeKernel>(dispatch));
  const bool gpu_ids = true;
#else
  const bool gpu_ids = false;
#endif
  for (const auto& raw : ids) {
    const std::string id = canonical_kernel_id(raw);
    if (id.find('~') != std::string::npos || id.rfind("host-contract@", 0) == 0) {
      // a mutant of the catalog or a rounding variant of the host kernel, after the clean kernels
      out.push_back(make_kernel_by_id(id, host_budget, dispatch));
      continue;
    }
    if (id == "gpu-fused-moe" && !gpu_ids)
      throw_bad_input("command line", "--kernel", "this build has no GPU kernels",
                      "configure with `cmake --preset cuda` or `--preset hip` to build them");
    if (id != "all" && id != "host-contract" && !(gpu_ids && id == "gpu-fused-moe"))
      throw_bad_input("command line", "--kernel", "unknown kernel '" + id + "'",
                      "use one of: " + available_kernel_ids() + " (or host, gpu, all)");
  }
  return out;
}

}  // namespace moe
