// A plugin whose loading ended or blocked the probe process (plugin_probe.hpp): its ELF constructors exit, fault or
// hang inside dlopen. The harness never loads it; this stands in for it in the run's kernel list, so that the run
// goes on with the other kernels and each of its cases is one error record naming the library and what loading it
// did (harness/isolation/case_context.hpp), instead of a run that ends with the plugin's exit status.
#pragma once
#include <filesystem>
#include <stdexcept>
#include <string>

#include "kernels/kernel_under_test.hpp"
#include "kernels/plugin/plugin_probe.hpp"

namespace moe {

class UnloadablePlugin : public KernelUnderTest {
 public:
  UnloadablePlugin(std::filesystem::path path, PluginLoadFailure failure, std::string spec);
  // "plugin-not-loaded:FILE" (its own id is the library's answer, which was never asked), FILE's '.' as '_'.
  std::string id() const override { return id_; }
  std::string version() const override { return "not loaded (plugin " + path_.filename().string() + ")"; }
  bool needs_device() const override { return false; }
  Support supports(const ProblemSpec&, const DeviceInfo*) const override { return Support::yes(); }
  // Never called: its cases are error records before any work (CaseContext::execute, the supervisor).
  void prepare(const ProblemSpec&, Checkpoint&) override;
  RunInfo run(const ProblemSpec&, const Checkpoint&, const RoutingResult&, Tensor&) override;
  const std::filesystem::path& path() const { return path_; }
  const std::string& spec() const { return spec_; }  // as given: PATH or PATH~MUTANT
  const PluginLoadFailure& failure() const { return failure_; }
  // "loading the library PATH exited the process with status 42 (in a probe process; the harness loaded nothing of
  // it)".
  std::string problem() const;

 private:
  std::filesystem::path path_;
  PluginLoadFailure failure_;
  std::string spec_, id_;
};

}  // namespace moe
