// moe_harness.Tensor and moe_harness.Fixture: zero-copy views of host tensors through the buffer protocol (NumPy)
// and DLPack (torch, CuPy, JAX), each tagged with its storage format's name from the format table
// (formats/dtype.hpp: f32, f16, bf16, i32, u8, e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0, e2m1x2).
//
// Element types: f32, f16 and i32 are themselves in both protocols; bf16 is uint16 bits in NumPy (NumPy has no
// bfloat16) and bfloat16 in DLPack; every one-byte format is uint8 codes in both, its format name saying what the
// codes mean (moe_harness.torch views them as torch's float8 / float4 dtypes where torch has them).
#include <pybind11/stl.h>

#include <cstring>

#include "harness/python/native/dlpack.hpp"
#include "harness/python/native/handles.hpp"

namespace moe::python {

namespace {

// The buffer protocol's struct-module format of a dtype's stored unit.
const char* buffer_format(api::DType d) {
  switch (d) {
    case api::DType::f32: return "f";
    case api::DType::f16: return "e";
    case api::DType::bf16: return "H";
    case api::DType::i32: return "i";
    default: return "B";  // u8 and the one-byte codes (fp8, e8m0, packed e2m1)
  }
}

dlpack::DataType dlpack_type(api::DType d) {
  switch (d) {
    case api::DType::f32: return {dlpack::kDLFloat, 32, 1};
    case api::DType::f16: return {dlpack::kDLFloat, 16, 1};
    case api::DType::bf16: return {dlpack::kDLBfloat, 16, 1};
    case api::DType::i32: return {dlpack::kDLInt, 32, 1};
    default: return {dlpack::kDLUInt, 8, 1};
  }
}

// What a DLPack capsule owns: the managed tensor, its shape and strides, and the tensor's owner.
struct DlpackContext {
  dlpack::DLManagedTensor managed{};
  std::vector<std::int64_t> shape, strides;
  std::shared_ptr<void> owner;
};

// The consumer calls it when it is done (from any thread: it touches no Python object).
void delete_context(dlpack::DLManagedTensor* m) { delete static_cast<DlpackContext*>(m->manager_ctx); }

// A capsule never consumed (still named "dltensor") frees its tensor itself.
void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, dlpack::kCapsuleName)) return;
  auto* m = static_cast<dlpack::DLManagedTensor*>(PyCapsule_GetPointer(capsule, dlpack::kCapsuleName));
  if (m && m->deleter) m->deleter(m);
}

std::vector<py::ssize_t> row_major_strides(const std::vector<std::int64_t>& shape, std::size_t unit) {
  std::vector<py::ssize_t> s(shape.size());
  py::ssize_t step = py::ssize_t(unit);
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = step;
    step *= py::ssize_t(shape[i]);
  }
  return s;
}

py::object to_dlpack(const TensorView& v, py::object stream, py::kwargs kwargs) {
  if (kwargs.contains("copy") && !kwargs["copy"].is_none() && kwargs["copy"].cast<bool>())
    throw py::buffer_error("moe_harness.Tensor.__dlpack__(copy=True): the tensor is exported without a copy; "
                           "copy the consumer's tensor instead (torch.from_dlpack(t).clone())");
  auto* ctx = new DlpackContext;
  ctx->owner = v.owner;
  ctx->shape = v.tensor->shape();
  for (const py::ssize_t s : row_major_strides(ctx->shape, 1)) ctx->strides.push_back(std::int64_t(s));
  dlpack::DLTensor& t = ctx->managed.dl_tensor;
  t.data = v.tensor->bytes();
  t.device = {dlpack::kDLCPU, 0};
  t.ndim = std::int32_t(ctx->shape.size());
  t.dtype = dlpack_type(v.tensor->dtype());
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = delete_context;
  PyObject* cap = PyCapsule_New(&ctx->managed, dlpack::kCapsuleName, capsule_destructor);
  if (!cap) {
    delete ctx;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(cap);
}

// The tensor `name` and what keeps it alive: the routing tensors are their own (a probe's routing replaces them,
// while a view of the previous call's may still be held), the checkpoint's are the fixture's.
std::pair<std::shared_ptr<void>, api::Tensor*> find_tensor(const std::shared_ptr<FixtureData>& d, const std::string& name) {
  if (name == "topk_ids") return {d->topk_ids, d->topk_ids.get()};
  if (name == "topk_weights") return {d->topk_weights, d->topk_weights.get()};
  for (api::Tensor* t : d->fixture.pristine.tensors())
    if (t->name() == name) return {d, t};
  return {nullptr, nullptr};
}

std::vector<std::string> tensor_names(const FixtureData& d) {
  std::vector<std::string> names;
  for (const api::Tensor* t : d.fixture.pristine.tensors())
    if (t->name() != "topk_ids" && t->name() != "topk_weights") names.push_back(t->name());
  if (d.topk_ids) names.insert(names.end(), {"topk_ids", "topk_weights"});
  return names;
}

}  // namespace

TensorView view_of(std::shared_ptr<void> owner, api::Tensor* t, bool writable) { return {std::move(owner), t, writable}; }

TensorView owned_view(api::Tensor&& t) {
  auto p = std::make_shared<api::Tensor>(std::move(t));
  api::Tensor* raw = p.get();
  return {std::shared_ptr<void>(std::move(p)), raw, true};
}

void FixtureData::set_routing(const api::RoutingResult& r) {
  auto ids = std::make_shared<api::Tensor>("topk_ids", api::DType::i32, std::vector<std::int64_t>{r.tokens, r.k});
  auto w = std::make_shared<api::Tensor>("topk_weights", api::DType::f32, std::vector<std::int64_t>{r.tokens, r.k});
  if (!r.ids.empty()) std::memcpy(ids->bytes(), r.ids.data(), r.ids.size() * sizeof(std::int32_t));
  if (!r.weights.empty()) std::memcpy(w->bytes(), r.weights.data(), r.weights.size() * sizeof(float));
  topk_ids = std::move(ids);
  topk_weights = std::move(w);
}

api::RoutingResult FixtureData::routing() const {
  api::RoutingResult r;
  r.tokens = topk_ids->dim(0);
  r.k = int(topk_ids->dim(1));
  const auto ids = topk_ids->span<const std::int32_t>();
  const auto w = topk_weights->span<const float>();
  r.ids.assign(ids.begin(), ids.end());
  r.weights.assign(w.begin(), w.end());
  return r;
}

void register_tensors(py::module_& m) {
  py::class_<TensorView>(m, "Tensor", py::buffer_protocol(),
                         "One host tensor of a fixture or an output: buffer protocol (NumPy) and DLPack, no copy.")
      .def_property_readonly("name", [](const TensorView& v) { return v.tensor->name(); })
      .def_property_readonly("format", [](const TensorView& v) { return std::string(api::dtype_name(v.tensor->dtype())); },
                             "the storage format's name (formats/dtype.hpp): bf16, e4m3fn, e8m0, e2m1x2, ...")
      .def_property_readonly("shape", [](const TensorView& v) { return py::tuple(py::cast(v.tensor->shape())); },
                             "the stored shape (e2m1x2: bytes, two elements each, in the last dimension)")
      .def_property_readonly("nbytes", [](const TensorView& v) { return v.tensor->nbytes(); })
      .def_property_readonly("writable", [](const TensorView& v) { return v.writable; })
      .def_buffer([](TensorView& v) {
        const std::size_t unit = api::dtype_size(v.tensor->dtype());
        std::vector<py::ssize_t> shape(v.tensor->shape().begin(), v.tensor->shape().end());
        return py::buffer_info(v.tensor->bytes(), py::ssize_t(unit), buffer_format(v.tensor->dtype()),
                               py::ssize_t(shape.size()), shape, row_major_strides(v.tensor->shape(), unit),
                               !v.writable);
      })
      .def("__dlpack__", &to_dlpack, py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const TensorView&) { return py::make_tuple(int(dlpack::kDLCPU), 0); })
      .def("__repr__", [](const TensorView& v) {
        std::string s = "moe_harness.Tensor(" + v.tensor->name() + ", " + std::string(api::dtype_name(v.tensor->dtype())) + ", [";
        for (std::size_t i = 0; i < v.tensor->shape().size(); ++i) s += (i ? ", " : "") + std::to_string(v.tensor->dim(i));
        return s + "])";
      });

  py::class_<FixtureObject>(m, "Fixture", py::dynamic_attr(),
                            "A case's tensors by name (the checkpoint's, plus topk_ids and topk_weights: the routing "
                            "the kernel is judged on), each a moe_harness.Tensor")
      .def("__getitem__", [](const FixtureObject& f, const std::string& name) {
        auto [owner, t] = find_tensor(f.data, name);
        if (!t) {
          std::string known;
          for (const std::string& n : tensor_names(*f.data)) known += (known.empty() ? "" : ", ") + n;
          throw py::key_error("fixture has no tensor '" + name + "'; it has " + known);
        }
        // Views of the pristine checkpoint are read-only in the buffer protocol; DLPack carries no such flag.
        return view_of(std::move(owner), t, false);
      })
      .def("__contains__", [](const FixtureObject& f, const std::string& name) { return find_tensor(f.data, name).second != nullptr; })
      .def("keys", [](const FixtureObject& f) { return tensor_names(*f.data); })
      .def("__len__", [](const FixtureObject& f) { return tensor_names(*f.data).size(); })
      .def_property_readonly("fingerprint", [](const FixtureObject& f) { return f.data->fixture.fingerprint; },
                             "the checkpoint's fingerprint as generated (report.json fixture_fingerprint)");
}

}  // namespace moe::python
