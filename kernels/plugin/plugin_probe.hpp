// Loading a plugin runs its code before the harness calls any of it: the ELF constructors (and the constructors of
// the libraries it pulls in) run inside dlopen. One that exits, aborts, faults or hangs there would end or block the
// process that loads it. So the loader first dlopens the library in a probe process (a fork that loads it and exits
// 0); only a library whose loading leaves the probe alive and well is loaded for real. One that does not is never
// loaded by the harness: it becomes an UnloadablePlugin (unloadable_plugin.hpp), each of its cases one error record.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace moe {

// How long the probe may take to load a library before it is killed, unless $MOE_PLUGIN_LOAD_TIMEOUT (seconds,
// (0, 3600]) says otherwise.
inline constexpr double kPluginProbeSeconds = 60;

// What loading the library did to the probe process.
struct PluginLoadFailure {
  bool hung = false;  // it did not return within the limit (killed); else it exited or died of a signal
  std::string how;    // in words: "exited the process with status 42", "killed the process with signal 11 (...)"
};

// The probe's limit: kPluginProbeSeconds, or $MOE_PLUGIN_LOAD_TIMEOUT; a value that is not a number in (0, 3600] is
// bad input (exit 2) naming the variable.
double plugin_probe_seconds();

// Loads `path` in a probe process (killed with the caller); nullopt when loading returned, else how it failed.
std::optional<PluginLoadFailure> probe_plugin_load(const std::filesystem::path& path);

}  // namespace moe
