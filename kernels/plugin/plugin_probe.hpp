// Loading a plugin runs its code before the harness calls any of it: the ELF constructors (and the constructors of
// the libraries it pulls in) run inside dlopen. One that exits, aborts, faults or hangs there would end or block the
// process that loads it. So the loader first dlopens the library in a probe process (a fork that loads it and exits
// 0); only a library whose loading leaves the probe alive and well is loaded for real.
#pragma once
#include <filesystem>

namespace moe {

// How long the probe may take to load a library before it is killed and the plugin refused.
inline constexpr int kPluginProbeSeconds = 60;

// Bad input (exit 2, key --plugin) naming `path` when loading it in a probe process exits the probe, kills it with a
// signal, or takes longer than kPluginProbeSeconds; the probe's status is in the message.
void probe_plugin_load(const std::filesystem::path& path);

}  // namespace moe
