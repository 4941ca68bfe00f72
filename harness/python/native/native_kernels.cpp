// moe_harness.native_kernel(ID): a kernel of this build (moe::api::make_kernel: host-contract, gpu-fused-moe in GPU
// builds, KERNEL~MUTANT) as a Python kernel object, so that a native kernel can be judged through the Python path:
// the Python path against `run` on the same kernel (tests), and the per-case overhead of that path
// (harness/bench/python_overhead.py). Its time inside the native kernel's run() is summed in `seconds` (what the
// pipeline's kernel phase measures for `run`), inside prepare() in `prepare_seconds`.
#include <pybind11/stl.h>

#include <chrono>

#include "harness/python/native/handles.hpp"

namespace moe::python {

namespace {

struct NativeKernel {
  std::unique_ptr<api::KernelUnderTest> kernel;
  double seconds = 0, prepare_seconds = 0;  // inside kernel->run(), inside kernel->prepare()
  long calls = 0;
};

const api::CaseSpec& spec_of(py::handle case_obj) {
  return py::cast<const CaseHandle&>(case_obj.attr("_native")).spec();
}

const api::DeviceInfo* device_for(const NativeKernel& k) {
  return k.kernel->needs_device() && live_device().device ? &*live_device().device : nullptr;
}

// f() without the GIL; its seconds added to `total`.
template <class F>
void timed(double& total, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  {
    py::gil_scoped_release nogil;
    f();
  }
  total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

py::object call(NativeKernel& k, const FixtureObject& fx, TensorView& out) {
  if (!out.writable) throw py::value_error("native kernel: the output must be a writable moe_harness.Tensor");
  if (!fx.data->topk_ids) throw py::value_error("native kernel: the fixture has no routing");
  const api::RoutingResult routing = fx.data->routing();
  api::RunInfo info;
  timed(k.seconds, [&] {
    // One call is one case here (Python may change the fixture's tensors between calls): a kernel's device copies
    // of them are freed after it.
    const EndCase end_case(*k.kernel);
    info = k.kernel->run(fx.data->fixture.problem, fx.data->fixture.pristine, routing, *out.tensor);
  });
  ++k.calls;
  return py::str(info.variant);
}

}  // namespace

void register_native_kernels(py::module_& m) {
  py::class_<NativeKernel>(m, "NativeKernel", "A kernel of this build as a Python kernel object")
      .def_property_readonly("id", [](const NativeKernel& k) { return k.kernel->id(); })
      .def_property_readonly("version", [](const NativeKernel& k) { return k.kernel->version(); })
      .def_property_readonly("needs_device", [](const NativeKernel& k) { return k.kernel->needs_device(); })
      .def_readonly("seconds", &NativeKernel::seconds)
      .def_readonly("prepare_seconds", &NativeKernel::prepare_seconds)
      .def_readonly("calls", &NativeKernel::calls)
      .def("supports", [](const NativeKernel& k, py::handle case_obj) -> py::object {
        const api::Support s = k.kernel->supports(spec_of(case_obj).problem, device_for(k));
        return s.supported ? py::object(py::none()) : py::object(py::str(s.reason));
      })
      .def("deterministic", [](const NativeKernel& k, py::handle case_obj) {
        return k.kernel->deterministic(spec_of(case_obj).problem);
      })
      .def("prepare", [](NativeKernel& k, const FixtureObject& fx) {
        timed(k.prepare_seconds, [&] { k.kernel->prepare(fx.data->fixture.problem, fx.data->fixture.pristine); });
      })
      .def("__call__", &call, py::arg("fixture"), py::arg("out"));
  m.def("native_kernel", [](const std::string& id, double host_budget) {
    NativeKernel k;
    k.kernel = api::make_kernel(id, host_budget);
    return k;
  }, py::arg("id"), py::arg("host_budget") = 0.0);
}

}  // namespace moe::python
