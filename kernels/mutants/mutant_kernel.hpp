// A mutant of the catalog around ANY kernel under test (host, GPU, plugin, external output): the input/output
// mutants (mutation.hpp: mutant_level(m) == io) are a change to what the kernel is given (the problem it is told,
// the routing it is handed, its working clone of the checkpoint, never the pristine tensors) or to what it returns,
// so the wrapper applies them outside the kernel and the same bug tests every kernel. For an in-kernel mutant the
// inner kernel carries the bug itself (host: kernels/mutants/host_mutant_hooks.hpp) and the wrapper only names it.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>
#include <string>

#include "kernels/kernel_under_test.hpp"
#include "kernels/mutants/mutation.hpp"

namespace moe {

// What the kernel is told under bug m (an io mutant; any other m: p unchanged).
ProblemSpec mutated_problem(Mutation m, const ProblemSpec& p);
// The routing the kernel is handed under bug m: its weights or ids changed (p is the true problem, working the
// kernel's clone: routing_not_renormalized reads the router logits from it).
RoutingResult mutated_routing(Mutation m, const ProblemSpec& p, const Checkpoint& working, const RoutingResult& r);
// The kernel's working clone under bug m, before the kernel's own prepare(): a bad fn -> fnuz converter in front
// of it, the biases left out.
void mutate_working_checkpoint(Mutation m, Checkpoint& working);

class MutantKernel : public KernelUnderTest {
 public:
  // id: the report id; empty: the inner kernel's id + "~" + the mutant's name.
  MutantKernel(std::unique_ptr<KernelUnderTest> inner, Mutation m, std::string id = "");
  std::string id() const override { return id_; }
  std::string version() const override { return inner_->version(); }
  bool needs_device() const override { return inner_->needs_device(); }
  // Asked about the true problem: the kernel as built either handles the case or declines it, bug or not.
  Support supports(const ProblemSpec& p, const DeviceInfo* device) const override {
    return inner_->supports(p, device);
  }
  void prepare(const ProblemSpec& p, Checkpoint& working) override;
  RunInfo run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing, Tensor& out) override;
  // The inner kernel's declaration: a bug does not change what the kernel says it computes.
  RoundingContract rounding_contract(const ProblemSpec& p) const override { return inner_->rounding_contract(p); }
  bool deterministic(const ProblemSpec& p) const override { return inner_->deterministic(mutated_problem(m_, p)); }
  bool rerunnable() const override { return inner_->rerunnable(); }
  bool reads_given_checkpoint() const override { return inner_->reads_given_checkpoint(); }
  bool rereads_expert_weights() const override { return inner_->rereads_expert_weights(); }
  bool rows_exact_across_layouts(const ProblemSpec& p) const override {
    return inner_->rows_exact_across_layouts(mutated_problem(m_, p));
  }
  void set_timing(bool on) override { inner_->set_timing(on); }
  void end_case() override { inner_->end_case(); }
  std::vector<std::string> dispatch_variants(const ProblemSpec& p) const override {
    return inner_->dispatch_variants(mutated_problem(m_, p));
  }
  void select_dispatch(const std::string& choice) override { inner_->select_dispatch(choice); }
  std::vector<std::pair<std::string, std::string>> input_checks() const override { return inner_->input_checks(); }
  std::vector<std::string> device_red_zone_violations(std::int64_t& bytes) const override {
    return inner_->device_red_zone_violations(bytes);
  }
  // The bug is applied around run(), which a device run does not go through.
  std::unique_ptr<DeviceRun> device_run(const ProblemSpec&, const Checkpoint&, const RoutingResult&,
                                        std::string& why_not) override {
    why_not = "an input/output mutant is applied around run(), which the device probes do not call";
    return nullptr;
  }

 private:
  // workspace_init_once: the emulated kernel's f32 workspace, kept across calls (grow-only, new elements 0), and
  // how much of it every call clears, fixed at the first call (its output's element count).
  void workspace_epilogue(Tensor& out);
  std::unique_ptr<KernelUnderTest> inner_;
  Mutation m_;
  std::string id_;
  std::vector<float> workspace_;
  std::optional<std::size_t> workspace_cleared_;
};

}  // namespace moe
