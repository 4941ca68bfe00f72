#include "harness/python/native/python_kernel.hpp"

#include <cstring>

namespace moe::python {

namespace {

// kernel.NAME(case) when the kernel has it (a method or a plain value), else nullopt. Only an AttributeError means
// "has none" (py::hasattr would swallow every exception, so a property that raises would silently read as absent and
// the case's own value be used): any other exception, reading the member or calling it, is a harness error naming
// kernel.NAME with the Python exception.
std::optional<py::object> ask(const py::object& kernel, const char* name, const py::object& case_obj,
                              const std::string& where) {
  if (kernel.is_none()) return std::nullopt;
  try {
    py::object v = py::reinterpret_steal<py::object>(PyObject_GetAttrString(kernel.ptr(), name));
    if (!v) {
      if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return std::nullopt;
      }
      throw py::error_already_set();
    }
    return PyCallable_Check(v.ptr()) ? v(case_obj) : v;
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) throw;
    api::throw_harness_error(where, std::string("kernel.") + name + " raised " + e.what(),
                             std::string("fix kernel.") + name + " (a value, or a method of the case returning one)");
  }
}

// A str the kernel handed back, as UTF-8; bad input naming `key` when it is not text or not encodable (a lone
// surrogate), never pybind's raw cast error.
std::string kernel_text(const py::object& v, const std::string& where, const std::string& key, const char* what) {
  if (!py::isinstance<py::str>(v))
    api::throw_bad_input(where, key, std::string("must be ") + what + ", got " + std::string(py::str(py::type::of(v).attr("__name__"))),
                         std::string("make it ") + what);
  Py_ssize_t n = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(v.ptr(), &n);
  if (!utf8) {
    PyErr_Clear();
    api::throw_bad_input(where, key, "is not valid UTF-8 text (it holds a lone surrogate)",
                         std::string("make it ") + what + " without lone surrogates");
  }
  return std::string(utf8, std::size_t(n));
}

// A bool the kernel declared (a value, or a method of the case returning one): True, False or a NumPy bool (pybind's
// caster without conversion); anything else (None, 1, "yes", which a converting cast would take as truth values) is
// bad input naming `key`.
bool kernel_bool(const py::object& v, const std::string& where, const std::string& key, const std::string& fix) {
  py::detail::make_caster<bool> b;
  if (!b.load(v, /*convert=*/false))
    api::throw_bad_input(where, key, "must be True or False (or a method of the case returning one), got " +
                                         std::string(py::str(py::type::of(v).attr("__name__"))),
                         fix);
  return py::detail::cast_op<bool>(b);
}

}  // namespace

PythonKernel::PythonKernel(py::object kernel, py::object case_obj, py::object spec, std::string id,
                           std::string version, bool needs_device)
    : kernel_(std::move(kernel)), case_(std::move(case_obj)), spec_(std::move(spec)), id_(std::move(id)),
      version_(std::move(version)), needs_device_(needs_device) {
  if (const auto s = ask(kernel_, "supports", case_, "kernel " + id_)) {
    if (py::isinstance<py::str>(*s)) support_ = api::Support::no(kernel_text(*s, "kernel " + id_, "supports", "a reason string"));
    else if (s->is_none() || (py::isinstance<py::bool_>(*s) && s->cast<bool>())) support_ = api::Support::yes();
    else if (py::isinstance<py::bool_>(*s)) support_ = api::Support::no("the kernel's supports() returned False");
    else api::throw_bad_input("kernel " + id_, "supports", "supports(case) must return None (supported) or a reason string (not supported)",
                              "return None or a reason string");
  }
  if (const auto d = ask(kernel_, "deterministic", case_, "kernel " + id_))
    deterministic_ = kernel_bool(*d, "kernel " + id_, "deterministic",
                                 "False where two runs may differ in the last bits (float atomics), else True");
  if (const auto r = ask(kernel_, "rereads_expert_weights", case_, "kernel " + id_))
    rereads_expert_weights_ = kernel_bool(*r, "kernel " + id_, "rereads_expert_weights",
                                          "True when every call reads the expert tensors from the fixture it is "
                                          "given (none kept from prepare()), else False");
  if (const auto g = ask(kernel_, "graph_safe", case_, "kernel " + id_))
    graph_safe_ = kernel_bool(*g, "kernel " + id_, "graph_safe",
                              "False when a call cannot be captured into a CUDA graph and replayed (host syncs, "
                              "data-dependent shapes: an eager-only kernel), else True");
  if (const auto c = ask(kernel_, "rounding_contract", case_, "kernel " + id_); c && !c->is_none()) {
    const std::string text = kernel_text(*c, "kernel " + id_, "rounding_contract",
                                         "a contract text such as \"gate_up=bf16,slot=bf16\" (or a method of the case "
                                         "returning one, or None)");
    contract_ = api::parse_rounding_contract_or_throw(text, "kernel " + id_, "rounding_contract");
  }
}

PythonKernel::~PythonKernel() {
  py::gil_scoped_acquire gil;  // the Python references below are dropped here, with the GIL
  kernel_ = case_ = spec_ = fixture_ = probe_run_ = py::object();
  interrupt_type_ = interrupt_value_ = interrupt_trace_ = py::object();
}

void PythonKernel::python_failed(py::error_already_set& e, const char* what) {
  if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) {
    interrupt_type_ = e.type();
    interrupt_value_ = e.value();
    interrupt_trace_ = e.trace();
  }
  std::string text;
  try {
    const py::list lines = py::module_::import("traceback").attr("format_exception")(e.type(), e.value(), e.trace());
    for (const py::handle l : lines) text += l.cast<std::string>();
  } catch (const py::error_already_set&) {
    text = e.what();
  }
  while (!text.empty() && text.back() == '\n') text.pop_back();
  api::throw_harness_error(id_, std::string(what) + " raised a Python exception:\n" + text,
                           "the traceback names the line; a case the kernel cannot compute belongs in its supports()");
}

void PythonKernel::reraise_interrupt() {
  if (!interrupt_type_) return;
  PyErr_Restore(interrupt_type_.release().ptr(), interrupt_value_.release().ptr(), interrupt_trace_.release().ptr());
  throw py::error_already_set();
}

namespace {
// Views (Tensor::borrow) of every tensor of c, in their slots: valid while c's storage lives.
api::Checkpoint checkpoint_views(api::Checkpoint& c) {
  std::vector<api::Tensor> views;
  for (api::Tensor* t : c.tensors())
    views.push_back(api::Tensor::borrow(t->name(), t->dtype(), t->shape(), t->bytes(), t->capacity()));
  std::optional<api::Checkpoint> v = api::Checkpoint::from_tensors(std::move(views));
  if (!v) api::throw_harness_error("python kernel", "the working checkpoint's tensor names do not place back into a checkpoint");
  return std::move(*v);
}
}  // namespace

void PythonKernel::prepare(const api::ProblemSpec& p, api::Checkpoint& working) {
  py::gil_scoped_acquire gil;
  data_ = std::make_shared<FixtureData>();
  data_->fixture.problem = p;
  data_->fixture.pristine = std::move(working);  // the working clone, now shared with the Python views
  working = checkpoint_views(data_->fixture.pristine);  // the pipeline's probes borrow from the same storage
  try {
    fixture_ = py::cast(FixtureObject{data_});
    fixture_.attr("spec") = spec_;
    fixture_.attr("case") = case_;
    if (!kernel_.is_none() && py::hasattr(kernel_, "prepare")) kernel_.attr("prepare")(fixture_);
  } catch (py::error_already_set& e) {
    python_failed(e, "kernel.prepare(fixture)");
  }
}

api::RunInfo PythonKernel::run(const api::ProblemSpec& p, const api::Checkpoint& given, const api::RoutingResult& routing,
                               api::Tensor& out) {
  py::gil_scoped_acquire gil;
  if (interrupt_type_) api::throw_harness_error(id_, "interrupted", "");
  if (!data_) api::throw_harness_error(id_, "run() before prepare()", "");
  api::RunInfo info;
  info.variant = "python";
  try {
    // The case's own checkpoint (the one prepare() took, or the views of it the pipeline holds), or a probe's.
    const bool own = given.x.bytes() == data_->fixture.pristine.x.bytes();
    py::object fixture = fixture_;
    if (!own) {
      auto probe = std::make_shared<FixtureData>();
      probe->fixture.problem = p;
      probe->fixture.pristine = given.clone();
      probe->set_routing(routing);
      fixture = py::cast(FixtureObject{probe});
      fixture.attr("spec") = spec_;
      fixture.attr("case") = case_;
    } else {
      data_->set_routing(routing);
    }
    const TensorView view = owned_view(out.clone());
    py::object out_obj = py::cast(view);
    const py::object r = kernel_(fixture, out_obj);
    if (py::isinstance<py::str>(r)) info.variant = r.cast<std::string>();
    std::memcpy(out.bytes(), view.tensor->bytes(), out.nbytes());
  } catch (py::error_already_set& e) {
    python_failed(e, "the kernel call kernel(fixture, out)");
  }
  return info;
}

// The device probes through moe_harness._device_probes (its docstring says what each call does on the device).
std::string PythonKernel::begin_device_probes(const api::ProblemSpec&, const api::Checkpoint&,
                                              const api::RoutingResult& routing) {
  py::gil_scoped_acquire gil;
  if (!data_) api::throw_harness_error(id_, "device probes before prepare()", "");
  try {
    data_->set_routing(routing);  // the judged call's fixture: the probes' runs are that call again
    const py::object r = py::module_::import("moe_harness._device_probes").attr("begin")(kernel_, fixture_);
    if (py::isinstance<py::str>(r)) return r.cast<std::string>();
    probe_run_ = r;
  } catch (py::error_already_set& e) {
    python_failed(e, "taking the fixture to the device for the device probes");
  }
  return "";
}

std::string PythonKernel::graph_replay_declined() const {
  return graph_safe_ ? "" : "the kernel declares graph_safe False: it runs eagerly only, never captured into a graph";
}

void PythonKernel::stream_order_run(api::Tensor& out) {
  py::gil_scoped_acquire gil;
  try {
    const TensorView view = owned_view(out.clone());
    probe_run_.attr("stream_order")(py::cast(view));
    std::memcpy(out.bytes(), view.tensor->bytes(), out.nbytes());
  } catch (py::error_already_set& e) {
    python_failed(e, "the stream_order run of kernel(fixture, out)");
  }
}

std::string PythonKernel::capture_graph() {
  py::gil_scoped_acquire gil;
  try {
    probe_run_.attr("capture")();
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) python_failed(e, "the graph capture");
    // The framework refused the capture (a host sync, an allocation it cannot hold): the probe's failure, in its words.
    return std::string(py::str(py::type::of(e.value()).attr("__name__"))) + ": " + std::string(py::str(e.value()));
  }
  return "";
}

void PythonKernel::replay_graph(const api::Tensor& x, const api::RoutingResult& routing, api::Tensor& out) {
  py::gil_scoped_acquire gil;
  try {
    data_->set_routing(routing);
    const TensorView x_view = owned_view(x.clone());
    const TensorView view = owned_view(out.clone());
    probe_run_.attr("replay")(py::cast(x_view), fixture_["topk_ids"], fixture_["topk_weights"], py::cast(view));
    std::memcpy(out.bytes(), view.tensor->bytes(), out.nbytes());
  } catch (py::error_already_set& e) {
    python_failed(e, "a replay of the captured graph");
  }
}

void PythonKernel::end_device_probes() {
  py::gil_scoped_acquire gil;
  if (probe_run_) {
    try {
      probe_run_.attr("close")();
    } catch (py::error_already_set&) {
      // Dropping the device copies cannot fail in a way the verdict should carry; the reference goes regardless.
    }
  }
  probe_run_ = py::object();
}

}  // namespace moe::python
