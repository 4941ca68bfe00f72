// The native half of the Python package moe_harness (harness/python/moe_harness/): moe::api in Python. Every
// moe::Error becomes moe_harness.Error carrying its exit code, where, key, problem and fix (README "Exit codes").
#include <pybind11/pybind11.h>

#include "harness/python/native/handles.hpp"

namespace py = pybind11;

namespace moe::python {

namespace {

PyObject* error_type = nullptr;

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const api::Error& e) {
    py::object err = py::reinterpret_borrow<py::object>(error_type)(e.what());
    err.attr("exit_code") = int(e.code());
    err.attr("where") = e.where();
    err.attr("key") = e.key();
    err.attr("problem") = e.problem();
    err.attr("fix") = e.fix();
    PyErr_SetObject(error_type, err.ptr());
  }
}

}  // namespace

}  // namespace moe::python

PYBIND11_MODULE(_moe_harness, m) {
  namespace mp = moe::python;
  m.doc() = "moe-harness's public C++ API (moe::api) for Python; use the package moe_harness";
  mp::error_type = PyErr_NewExceptionWithDoc(
      "moe_harness.Error", "Bad input (exit_code 2) or a harness error (3): where, key, problem and fix",
      PyExc_ValueError, nullptr);
  m.attr("Error") = py::handle(mp::error_type);
  py::register_exception_translator(&mp::translate);
  mp::register_tensors(m);
  mp::register_cases(m);
  mp::register_records(m);
  mp::register_native_kernels(m);
}
