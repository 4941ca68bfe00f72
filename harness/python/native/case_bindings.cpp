// moe_harness._moe_harness: suites and cases over moe::api (moe_harness/suite.hpp, moe_harness/case.hpp): load a
// suite, a case's id and canonical JSON, gating, the pristine fixture, the verdict on an output, the whole pipeline
// on a Python kernel. The package (harness/python/moe_harness/) wraps these in its documented classes.
#include <pybind11/stl.h>

#include "harness/python/native/handles.hpp"
#include "harness/python/native/python_kernel.hpp"

namespace moe::python {

namespace {

const char* action_name(api::GateDecision::Action a) {
  switch (a) {
    case api::GateDecision::Action::run: return "run";
    case api::GateDecision::Action::skip: return "skip";
    default: return "fail";
  }
}

api::DeviceRequirement requirement(bool required) {
  api::DeviceRequirement r;
  r.required = required;
  return r;
}

std::shared_ptr<SuiteHandle> load(const std::string& name_or_path, const std::vector<std::string>& filters,
                                  std::optional<std::uint64_t> seed, std::optional<std::string> reference_cache) {
  auto s = std::make_shared<SuiteHandle>();
  {
    py::gil_scoped_release nogil;
    s->suite = api::load_suite(name_or_path, filters);
    if (reference_cache) {
      try {
        s->references = std::make_unique<api::ReferenceCache>(*reference_cache);
      } catch (const api::Error& e) {  // named as the Python argument, not the CLI option
        api::throw_bad_input("moe_harness.suite()", "reference_cache", e.problem(), e.fix());
      }
    }
  }
  s->seed = seed;
  return s;
}

CaseHandle case_at(const std::shared_ptr<SuiteHandle>& s, std::size_t i) {
  if (i >= s->suite.cases.size()) throw py::index_error("suite has " + std::to_string(s->suite.cases.size()) + " cases");
  CaseHandle c;
  c.suite = s;
  c.index = i;
  return c;
}

py::tuple gate(CaseHandle& c, py::object case_obj, py::object kernel, const std::string& kernel_id, bool needs_device,
               bool require_device) {
  PythonKernel k(kernel, case_obj, py::none(), kernel_id, "", needs_device);
  const api::GateDecision d =
      api::gate(c.spec(), k, needs_device ? live_device() : api::DeviceDetection{}, requirement(require_device));
  return py::make_tuple(action_name(d.action), d.reason);
}

py::object fixture(CaseHandle& c) {
  c.ensure_fixture();
  return py::cast(FixtureObject{c.fixture});
}

api::CaseRecord judge(CaseHandle& c, py::handle out, const std::string& kernel_id) {
  c.ensure_fixture();
  const api::Fixture& f = c.fixture->fixture;
  const std::string where = "case.judge() of " + c.spec().id;
  api::Tensor t = output_from_python(out, f.problem, where);
  py::gil_scoped_release nogil;
  if (f.pristine.fingerprint() != f.fingerprint)
    api::throw_bad_input(where, "fixture", "the case's fixture tensors changed after case.fixture() returned them "
                                           "(a kernel wrote into its inputs)",
                         "compute from the fixture without writing into it (torch.from_dlpack views share its memory: "
                         "copy before changing them), or call case.release() for a fresh fixture");
  return api::judge(c.spec(), f, *c.refs, t, kernel_id);
}

api::CaseRecord run(CaseHandle& c, py::object case_obj, py::object spec, py::object kernel, const std::string& kernel_id,
                    const std::string& kernel_version, bool needs_device, bool require_device, bool envelope_always,
                    bool token_probes) {
  PythonKernel k(kernel, case_obj, spec, kernel_id, kernel_version, needs_device);
  api::PipelineOptions opt;
  opt.envelope_always = envelope_always;
  opt.token_probes = token_probes;
  opt.seed = c.suite->seed;
  opt.weights = &c.suite->weights;
  opt.references = c.suite->references.get();
  opt.device_requirement = requirement(require_device);
  api::CaseRecord rec;
  {
    py::gil_scoped_release nogil;
    const std::lock_guard<std::mutex> lock(c.suite->run_mutex);
    rec = api::run_case(c.spec(), k, needs_device ? live_device() : api::DeviceDetection{}, opt);
  }
  k.reraise_interrupt();
  // The case's own input found bad while it ran (a floor that zeroes the contract reference: failed_check bad_input)
  // is bad input of the call, raised as moe_harness.Error (exit_code 2) like every other, never a verdict.
  if (rec.failed_check == Check::bad_input) {
    // rec.reason is the error's text, "WHERE: key 'KEY': PROBLEM. Fix: FIX" (fixtures/error.cpp).
    const std::string& r = rec.reason;
    const std::size_t k0 = r.find(": key '"), k1 = k0 == std::string::npos ? k0 : r.find("': ", k0 + 7);
    const std::size_t f = r.rfind(". Fix: ");
    if (k1 != std::string::npos && f != std::string::npos && f > k1)
      api::throw_bad_input("moe_harness.Case.run() of " + c.spec().id + ": " + r.substr(0, k0),
                           r.substr(k0 + 7, k1 - k0 - 7), r.substr(k1 + 3, f - k1 - 3), r.substr(f + 7));
    api::throw_bad_input("moe_harness.Case.run() of " + c.spec().id, "", r, "");
  }
  return rec;
}

}  // namespace

void CaseHandle::ensure_fixture() {
  if (fixture && refs) return;
  auto data = std::make_shared<FixtureData>();
  std::shared_ptr<const api::ReferenceSet> r;
  {
    py::gil_scoped_release nogil;
    data->fixture = api::make_fixture(spec(), suite->seed);
    // A cache of its own over the suite's directory (entries are written atomically, as between processes): this
    // runs outside run_mutex, beside a case.run() that may be using the suite's.
    std::optional<api::ReferenceCache> cache;
    if (suite->references) cache.emplace(suite->references->dir());
    r = std::make_shared<const api::ReferenceSet>(
        api::compute_references(spec(), data->fixture, cache ? &*cache : nullptr));
    data->set_routing(r->routing);
  }
  fixture = std::move(data);
  refs = std::move(r);
}

const api::DeviceDetection& live_device() {
  static const api::DeviceDetection d = api::detect_device();
  return d;
}

void register_cases(py::module_& m) {
  py::class_<SuiteHandle, std::shared_ptr<SuiteHandle>>(m, "Suite")
      .def_property_readonly("name", [](const SuiteHandle& s) { return s.suite.name; })
      .def_property_readonly("file", [](const SuiteHandle& s) { return s.suite.file; })
      .def_property_readonly("seed", [](const SuiteHandle& s) { return s.seed; })
      .def("__len__", [](const SuiteHandle& s) { return s.suite.cases.size(); })
      .def("case", &case_at, py::arg("index"));
  m.def("load_suite", &load, py::arg("name_or_path"), py::arg("filters") = std::vector<std::string>{},
        py::arg("seed") = py::none(), py::arg("reference_cache") = py::none(),
        "The suite (a name such as smoke or nightly, or a YAML path), keeping the cases the id globs select.");

  py::class_<CaseHandle>(m, "Case")
      .def_property_readonly("id", [](const CaseHandle& c) { return c.spec().id; })
      .def_property_readonly("source", [](const CaseHandle& c) { return c.spec().source; })
      .def_property_readonly("json", [](const CaseHandle& c) { return api::case_json(c.spec()); })
      .def_property_readonly("suite", [](const CaseHandle& c) { return c.suite; })
      .def("gate", &gate, py::arg("case_obj"), py::arg("kernel"), py::arg("kernel_id"), py::arg("needs_device"),
           py::arg("require_device"))
      .def("fixture", &fixture)
      .def("judge", &judge, py::arg("out"), py::arg("kernel_id"))
      .def("run", &run, py::arg("case_obj"), py::arg("spec"), py::arg("kernel"), py::arg("kernel_id"),
           py::arg("kernel_version"), py::arg("needs_device"), py::arg("require_device"),
           py::arg("envelope_always") = false, py::arg("token_probes") = true)
      // The output's shape and dtype do not depend on the seed: the case's own problem gives them.
      .def("new_output", [](const CaseHandle& c) { return owned_view(api::new_output(c.spec().problem)); })
      .def("release", [](CaseHandle& c) {
        c.fixture.reset();
        c.refs.reset();
      });
}

}  // namespace moe::python
