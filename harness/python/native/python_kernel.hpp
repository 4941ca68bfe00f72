// A Python callable as a KernelUnderTest, so that case.run() is moe::api::run_case on it: the same gating, NaN
// sentinel, pristine check, verdict and structural probes (rerun into the inverse sentinel, linearity) as `run`.
//
// The kernel object: callable as kernel(fixture, out) -> None or a variant string, where `fixture` is a
// moe_harness.Fixture over the working clone (plus the routing of this call) and `out` a writable moe_harness.Tensor
// [tokens, hidden] pre-filled with the sentinel; optional methods prepare(fixture) (once per case, before the first
// call), supports(case) -> None | reason string, deterministic(case) -> bool.
//
// The GIL: run_case runs with the GIL released (the reference and the judge are OpenMP code); each call into
// Python takes it. supports() and deterministic() are asked before run_case (so an exception in them reaches the
// caller as itself, never a skip). An exception in prepare() or the call becomes the case's error record with its
// traceback; KeyboardInterrupt and SystemExit end the case the same way and are raised again once run_case returns.
//
// Lifetimes: prepare() takes the working clone's tensors into a FixtureData that the Python views share (the
// pipeline's working checkpoint becomes views of them, for the probes), and each call gets its own output and routing
// tensors (copied back into the pipeline's output afterwards); a call on another checkpoint (a token probe's) gets a
// FixtureData owning a copy of it. So a view the kernel keeps after the call never points into freed memory.
//
// The device probes (docs/python.md "Device probes"): on a kernel that needs a device, PythonKernel is the
// DrivenDeviceProbes of harness/pipeline/device_probes.hpp over moe_harness._device_probes, which runs the calls on
// torch's streams and captures one into a torch CUDA graph; graph_safe (a bool, or a method of the case returning
// one; default True) False declines graph_replay with that reason, as eager-only ops are kept out of serving graphs.
//
// The rounding contract: kernel.rounding_contract, a string in the contract's text form ("gate_up=bf16,slot=bf16",
// "default") or a method rounding_contract(case) returning one (None: the default), read when the kernel object is
// taken, as supports and deterministic are; a text the parser refuses raises moe_harness.Error before anything runs.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "harness/pipeline/device_probes.hpp"
#include "harness/python/native/handles.hpp"

namespace moe::python {

class PythonKernel final : public api::KernelUnderTest, public moe::DrivenDeviceProbes {
 public:
  // `case_obj` is what supports()/deterministic() are given; `spec` is set as the fixture's .spec.
  PythonKernel(py::object kernel, py::object case_obj, py::object spec, std::string id, std::string version,
               bool needs_device);
  ~PythonKernel() override;

  std::string id() const override { return id_; }
  std::string version() const override { return version_; }
  bool needs_device() const override { return needs_device_; }
  api::Support supports(const api::ProblemSpec&, const api::DeviceInfo*) const override { return support_; }
  void prepare(const api::ProblemSpec& p, api::Checkpoint& working) override;
  api::RunInfo run(const api::ProblemSpec& p, const api::Checkpoint& working, const api::RoutingResult& routing,
                   api::Tensor& out) override;
  bool deterministic(const api::ProblemSpec&) const override { return deterministic_; }
  // prepare() takes the working clone into the fixture the Python views share and hands the pipeline views of it
  // back; a run() on another checkpoint (a token probe's: padded, poisoned rows) gets a fixture over a copy of that.
  bool reads_given_checkpoint() const override { return true; }
  // A Python kernel computes through NumPy or torch, whose results for a row may depend on the batch's layout: the
  // token probes run their row-bound path on it. It may keep weights it converted in prepare(), so the relabeling
  // probe runs only on one that declares `rereads_expert_weights` (it reads the expert tensors from the fixture of
  // each call).
  bool rows_exact_across_layouts(const api::ProblemSpec&) const override { return false; }
  bool rereads_expert_weights() const override { return rereads_expert_weights_; }
  api::RoundingContract rounding_contract(const api::ProblemSpec&) const override { return contract_; }
  // The device probes reach a Python kernel as DrivenDeviceProbes (below): its device work is torch's or Triton's,
  // which only torch can put on a stream or capture (docs/judging.md "Streams and graph replay").
  std::unique_ptr<moe::DeviceRun> device_run(const api::ProblemSpec&, const api::Checkpoint&, const api::RoutingResult&,
                                             std::string& why_not) override {
    why_not = "a Python kernel: its device work goes through torch, which drives the device probes";
    return nullptr;
  }
  std::string begin_device_probes(const api::ProblemSpec& p, const api::Checkpoint& working,
                                  const api::RoutingResult& routing) override;
  std::string graph_replay_declined() const override;
  void stream_order_run(api::Tensor& out) override;
  std::string capture_graph() override;
  void replay_graph(const api::Tensor& x, const api::RoutingResult& routing, api::Tensor& out) override;
  void end_device_probes() override;

  // Raises the KeyboardInterrupt or SystemExit a call ended with, if any (GIL held).
  void reraise_interrupt();

 private:
  [[noreturn]] void python_failed(py::error_already_set& e, const char* what);
  py::object kernel_, case_, spec_;
  std::string id_, version_;
  bool needs_device_;
  api::Support support_;
  bool deterministic_ = true;
  bool rereads_expert_weights_ = false;
  bool graph_safe_ = true;
  py::object probe_run_;  // moe_harness._device_probes' run of this case, between begin and end_device_probes
  api::RoundingContract contract_;
  std::shared_ptr<FixtureData> data_;
  py::object fixture_;  // the moe_harness.Fixture over data_
  py::object interrupt_type_, interrupt_value_, interrupt_trace_;
};

}  // namespace moe::python
