// The native half of the Python package moe_harness (harness/python/moe_harness/): moe::api in Python. Every
// moe::Error becomes moe_harness.Error carrying its exit code, where, key, problem and fix (docs/cli.md "Exit codes").
#include <pybind11/pybind11.h>

#include <filesystem>
#include <string>

#include "harness/python/native/handles.hpp"

namespace py = pybind11;

namespace moe::python {

namespace {

PyObject* error_type = nullptr;

void raise(const std::string& what, int code, const std::string& where, const std::string& key,
           const std::string& problem, const std::string& fix) {
  py::object err = py::reinterpret_borrow<py::object>(error_type)(what);
  err.attr("exit_code") = code;
  err.attr("where") = where;
  err.attr("key") = key;
  err.attr("problem") = problem;
  err.attr("fix") = fix;
  PyErr_SetObject(error_type, err.ptr());
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const api::Error& e) {
    raise(e.what(), int(e.code()), e.where(), e.key(), e.problem(), e.fix());
  } catch (const std::filesystem::filesystem_error& e) {
    // Output locations are checked before work (api::check_report_dir); a file system failure past them (a disk
    // full, a directory removed under the run) is a harness error, still carrying where and why.
    const std::string where = e.path1().string(), fix = "check the path, its permissions and the free space";
    raise(where + ": " + e.code().message() + ". Fix: " + fix, int(api::ExitCode::harness_error), where, "",
          e.what(), fix);
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
