#include "kernels/plugin/unloadable_plugin.hpp"

#include <utility>

#include "fixtures/error.hpp"

namespace moe {

UnloadablePlugin::UnloadablePlugin(std::filesystem::path path, PluginLoadFailure failure, std::string spec)
    : path_(std::move(path)), failure_(std::move(failure)), spec_(std::move(spec)) {
  std::string file = path_.filename().string();
  for (char& c : file)
    if (c == '.') c = '_';  // GoogleTest's names split at '.'
  id_ = "plugin-not-loaded:" + file;
  const auto tilde = spec_.rfind('~');
  if (tilde != std::string::npos && spec_.find('/', tilde) == std::string::npos) id_ += spec_.substr(tilde);
}

std::string UnloadablePlugin::problem() const {
  return "loading the library " + path_.string() + " " + failure_.how +
         " (its load-time code ran in a probe process; the harness loaded nothing of it)";
}

void UnloadablePlugin::prepare(const ProblemSpec&, Checkpoint&) { throw_harness_error("plugin " + path_.string(), problem()); }

RunInfo UnloadablePlugin::run(const ProblemSpec&, const Checkpoint&, const RoutingResult&, Tensor&) {
  throw_harness_error("plugin " + path_.string(), problem());
}

}  // namespace moe
