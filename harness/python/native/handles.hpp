// What the Python objects of the native module hold: a loaded suite, one case of it, a fixture's tensors and a view
// of one tensor. Every object keeps what it points into alive through a shared_ptr, so a NumPy array or a DLPack
// consumer of a view never outlives the memory it reads.
#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <moe_harness/moe_harness.hpp>
#include <mutex>
#include <optional>
#include <string>

namespace moe::python {

namespace py = pybind11;
namespace api = moe::api;

// A loaded suite, shared by its cases.
struct SuiteHandle {
  api::Suite suite;
  std::optional<std::uint64_t> seed;  // replaces every case's seed when given (`run --seed`)
  api::WeightCache weights;           // expert weights shared by the case.run() calls of this suite, as `run` shares them
  // suite(reference_cache=DIR): the references and envelopes of case.run() kept on disk (`run --reference-cache`),
  // so that a second kernel with the same effective contract, or a later process, does not compute them again.
  std::unique_ptr<api::ReferenceCache> references;
  std::mutex run_mutex;               // one case.run() of this suite at a time: the weight cache is not thread-safe
};

// One case's tensors as a kernel sees them: the checkpoint (the pristine one for case.fixture(), the working clone
// in case.run()) and the routing the kernel is judged on (the reference's ids and weights).
struct FixtureData {
  api::Fixture fixture;
  std::shared_ptr<api::Tensor> topk_ids, topk_weights;  // replaced, not overwritten, when a probe changes the routing
  void set_routing(const api::RoutingResult& r);
  api::RoutingResult routing() const;
};

// A view of one tensor: `owner` keeps the tensor's memory alive as long as the view and whatever it exported.
struct TensorView {
  std::shared_ptr<void> owner;
  api::Tensor* tensor = nullptr;
  bool writable = false;
};

// The Python object for a fixture (a mapping of tensor names to views; dynamic attributes, so the package adds .spec).
struct FixtureObject {
  std::shared_ptr<FixtureData> data;
};

struct CaseHandle {
  std::shared_ptr<SuiteHandle> suite;
  std::size_t index = 0;
  // case.fixture()'s pristine fixture and its references, computed once (the references from the suite's reference
  // cache when it has one); release() drops them.
  std::shared_ptr<FixtureData> fixture;
  std::shared_ptr<const api::ReferenceSet> refs;
  const api::CaseSpec& spec() const { return suite->suite.cases[index]; }
  // The fixture and references (computed on first use, with the GIL released).
  void ensure_fixture();
};

// A view of `t` kept alive by `owner`.
TensorView view_of(std::shared_ptr<void> owner, api::Tensor* t, bool writable);
// A fresh tensor owned by its view (outputs, routing copies).
TensorView owned_view(api::Tensor&& t);

// The output a Python object holds (NumPy array or anything with the buffer protocol, or a DLPack tensor in host
// memory), copied into a Tensor of the case's output dtype; a wrong dtype, shape, layout or device is bad input
// naming the fix.
api::Tensor output_from_python(py::handle obj, const api::ProblemSpec& p, const std::string& where);

// The detected device, asked once per process.
const api::DeviceDetection& live_device();

void register_tensors(py::module_& m);
void register_cases(py::module_& m);
void register_records(py::module_& m);
void register_native_kernels(py::module_& m);

}  // namespace moe::python
