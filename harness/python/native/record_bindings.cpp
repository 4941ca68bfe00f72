// moe_harness._moe_harness.Record (a CaseRecord: the record `run` writes into report.json for one case and kernel)
// and the report writer over moe::api (moe_harness/report.hpp): provenance, then report.json, junit.xml, summary.md
// and report.html from the records.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "harness/python/native/handles.hpp"

namespace moe::python {

namespace {

py::array_t<double> array_of(const std::vector<double>& v) {
  py::array_t<double> a(py::ssize_t(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

py::list systematic_of(const api::CaseRecord& r) {
  py::list out;
  for (const auto& s : r.systematic) {
    py::dict d;
    d["name"] = s.name;
    d["status"] = s.status;
    d["z"] = s.z;
    d["z_threshold"] = s.z_threshold;
    d["effect"] = s.effect;
    d["effect_floor"] = s.effect_floor;
    d["at"] = s.at;
    d["failed"] = s.failed;
    out.append(d);
  }
  return out;
}

py::dict timing_of(const api::CaseRecord& r) {
  py::dict d;
  for (const auto& [name, field] : moe::kTimingPhases) d[name] = r.timing.*field;
  return d;
}

// The files of a run of `records` on `suite`: provenance of this build, the kernels and this machine's device, then the
// four report files in `dir`; returns their paths.
py::dict write(const std::vector<api::CaseRecord>& records, const std::shared_ptr<SuiteHandle>& suite,
               const std::vector<std::pair<std::string, std::string>>& kernels, const std::string& start_time,
               const std::filesystem::path& dir) {
  api::RunReport report;
  report.provenance = api::make_provenance(suite->suite, kernels, live_device(), suite->seed);
  if (!start_time.empty()) report.provenance.start_time = start_time;
  report.cases = records;
  report.provenance.end_time = api::utc_now();
  api::ReportFiles f;
  {
    py::gil_scoped_release nogil;
    f = api::write_reports(report, dir);
  }
  py::dict d;
  d["json"] = f.json;
  d["junit"] = f.junit;
  d["markdown"] = f.markdown;
  d["html"] = f.html;
  return d;
}

}  // namespace

void register_records(py::module_& m) {
  using R = api::CaseRecord;
  py::class_<R>(m, "Record", "One (case, kernel) record as report.json holds it (reports/run_report.hpp CaseRecord)")
      .def_readonly("id", &R::id)
      .def_readonly("kernel", &R::kernel)
      .def_property_readonly("status", [](const R& r) { return api::to_string(r.status); })
      .def_property_readonly("failed_check", [](const R& r) { return api::to_string(r.failed_check); })
      .def_readonly("reason", &R::reason)
      .def_readonly("source", &R::source)
      .def_readonly("variant", &R::variant)
      .def_readonly("metrics", &R::metrics)
      .def_property_readonly("token_cos", [](const R& r) { return array_of(r.token_cos); })
      .def_property_readonly("token_rel", [](const R& r) { return array_of(r.token_rel); })
      .def_readonly("probes", &R::probes)
      .def_readonly("details", &R::details)
      .def_readonly("fixture_fingerprint", &R::fixture_fingerprint)
      .def_property_readonly("systematic", &systematic_of)
      .def_property_readonly("contract", [](const R& r) {
        py::dict d;  // report.json's cases[].contract
        d["effective"] = r.contract.effective;
        d["source"] = r.contract.source;
        d["declared"] = r.contract.declared;
        d["not_applied"] = r.contract.not_applied;
        return d;
      })
      .def_property_readonly("timing", &timing_of);

  m.def("write_reports", &write, py::arg("records"), py::arg("suite"), py::arg("kernels"), py::arg("start_time"),
        py::arg("dir"));
  m.def("check_report_dir", &api::check_report_dir, py::arg("dir"), py::arg("key"));
  m.def("utc_now", &api::utc_now);
  m.def("version", &api::version);
  m.def("build_stamp", &api::build_stamp);
  m.def("device", [] {
    const api::DeviceDetection& d = live_device();
    py::dict out;
    out["runtime_present"] = d.runtime_present;
    out["message"] = d.message;
    if (d.device) {
      out["name"] = d.device->name;
      out["arch"] = d.device->arch;
      out["compute_units"] = d.device->compute_units;
    }
    return out;
  });
}

}  // namespace moe::python
