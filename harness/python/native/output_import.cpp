// A kernel's output from Python, copied once into a Tensor of the case's output dtype: any object with the buffer
// protocol (NumPy arrays, moe_harness.Tensor) or a DLPack tensor in host memory. GPU tensors reach this file already
// copied to the host by the package (moe_harness/_outputs.py).
//
// Element types: bf16 as DLPack bfloat16, or as 16-bit integers holding bf16 bits (NumPy has no bfloat16: NumPy
// uint16 or int16, torch.int16 views); f16 as float16; f32 as float32. Row-major (C-contiguous) only.
#include <cstring>

#include "harness/python/native/dlpack.hpp"
#include "harness/python/native/handles.hpp"

namespace moe::python {

namespace {

// What an element type of the input can stand for: a dtype, or 16-bit integers that hold bf16 bits.
struct InputType {
  std::optional<api::DType> dtype;
  bool bits16 = false;
  std::string spelling;  // for messages: "float32", "uint16", ...
};

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

const char* torch_dtype(api::DType d) {
  return d == api::DType::bf16 ? "torch.bfloat16" : d == api::DType::f16 ? "torch.float16" : "torch.float32";
}
const char* numpy_dtype(api::DType d) {
  return d == api::DType::bf16 ? "numpy.uint16 holding bf16 bits" : d == api::DType::f16 ? "numpy.float16" : "numpy.float32";
}

// The dtype the output is taken as, or bad input naming the case's dtype and how to get it.
api::DType resolve_dtype(const InputType& in, const api::ProblemSpec& p, const std::string& where) {
  const api::DType want = p.output_dtype;
  if ((in.dtype && *in.dtype == want) || (in.bits16 && want == api::DType::bf16)) return want;
  const std::string name(api::dtype_name(want));
  api::throw_bad_input(where, "out",
                       "the output's element type is " + in.spelling + " but this case's output dtype is " + name,
                       std::string("pass ") + torch_dtype(want) + " (y.to(" + torch_dtype(want) + ")) or " +
                           numpy_dtype(want) + "; case.new_output() is a buffer of the right dtype and shape");
}

void check_shape(const std::vector<std::int64_t>& shape, const api::ProblemSpec& p, const std::string& where) {
  if (shape == std::vector<std::int64_t>{p.tokens, p.hidden}) return;
  api::throw_bad_input(where, "out", "the output's shape is " + shape_text(shape) + " but this case's is [tokens, hidden] = " +
                                         shape_text({p.tokens, p.hidden}),
                       "write the [tokens, hidden] output of the whole case (the slots summed in top-k order)");
}

bool row_major(const std::vector<std::int64_t>& shape, const std::int64_t* strides, std::int64_t unit) {
  std::int64_t step = unit;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] > 1 && strides[i] != step) return false;
    step *= shape[i];
  }
  return true;
}

[[noreturn]] void not_contiguous(const std::string& where) {
  api::throw_bad_input(where, "out", "the output is not row-major (C-contiguous)",
                       "pass y.contiguous() (torch) or numpy.ascontiguousarray(y)");
}

api::Tensor copy_into(const void* data, const std::vector<std::int64_t>& shape, api::DType d) {
  api::Tensor out("out", d, shape);
  if (out.nbytes()) std::memcpy(out.bytes(), data, out.nbytes());
  return out;
}

api::Tensor from_buffer(py::buffer b, const api::ProblemSpec& p, const std::string& where) {
  const py::buffer_info info = b.request();
  std::string fmt = info.format;
  if (!fmt.empty() && (fmt[0] == '<' || fmt[0] == '=' || fmt[0] == '@')) fmt.erase(0, 1);
  InputType in;
  in.spelling = "'" + info.format + "' of " + std::to_string(info.itemsize) + " bytes (buffer protocol)";
  if (fmt == "f" && info.itemsize == 4) in = {api::DType::f32, false, "float32"};
  else if (fmt == "e" && info.itemsize == 2) in = {api::DType::f16, false, "float16"};
  else if ((fmt == "H" || fmt == "h") && info.itemsize == 2) in = {std::nullopt, true, fmt == "H" ? "uint16" : "int16"};
  const api::DType d = resolve_dtype(in, p, where);
  const std::vector<std::int64_t> shape(info.shape.begin(), info.shape.end());
  check_shape(shape, p, where);
  std::vector<std::int64_t> strides(info.strides.begin(), info.strides.end());
  if (!row_major(shape, strides.data(), info.itemsize)) not_contiguous(where);
  return copy_into(info.ptr, shape, d);
}

api::Tensor from_dlpack(py::handle obj, const api::ProblemSpec& p, const std::string& where) {
  py::object cap = obj.attr("__dlpack__")();
  if (!PyCapsule_IsValid(cap.ptr(), dlpack::kCapsuleName))
    api::throw_bad_input(where, "out", "__dlpack__() did not return a \"dltensor\" capsule",
                         "pass a NumPy array or a torch tensor");
  auto* m = static_cast<dlpack::DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), dlpack::kCapsuleName));
  // Consumed: the capsule no longer frees the tensor; this function does, on every path out.
  PyCapsule_SetName(cap.ptr(), dlpack::kUsedCapsuleName);
  struct Release {
    dlpack::DLManagedTensor* m;
    ~Release() { if (m->deleter) m->deleter(m); }
  } release{m};
  const dlpack::DLTensor& t = m->dl_tensor;
  const std::int32_t dev = t.device.device_type;
  if (dev != dlpack::kDLCPU && dev != dlpack::kDLCUDAHost && dev != dlpack::kDLROCMHost)
    api::throw_bad_input(where, "out", "the output is in device memory (DLPack device type " + std::to_string(dev) + ")",
                         "moe_harness copies device tensors to the host itself when given through case.judge(); "
                         "here pass y.cpu()");
  const dlpack::DataType dt = t.dtype;
  InputType in;
  in.spelling = "DLPack code " + std::to_string(dt.code) + " bits " + std::to_string(dt.bits);
  if (dt.lanes == 1) {
    if (dt.code == dlpack::kDLFloat && dt.bits == 32) in = {api::DType::f32, false, "float32"};
    else if (dt.code == dlpack::kDLFloat && dt.bits == 16) in = {api::DType::f16, false, "float16"};
    else if (dt.code == dlpack::kDLBfloat && dt.bits == 16) in = {api::DType::bf16, false, "bfloat16"};
    else if ((dt.code == dlpack::kDLInt || dt.code == dlpack::kDLUInt) && dt.bits == 16)
      in = {std::nullopt, true, dt.code == dlpack::kDLInt ? "int16" : "uint16"};
  }
  const api::DType d = resolve_dtype(in, p, where);
  const std::vector<std::int64_t> shape(t.shape, t.shape + t.ndim);
  check_shape(shape, p, where);
  if (t.strides && !row_major(shape, t.strides, 1)) not_contiguous(where);
  return copy_into(static_cast<const char*>(t.data) + t.byte_offset, shape, d);
}

}  // namespace

api::Tensor output_from_python(py::handle obj, const api::ProblemSpec& p, const std::string& where) {
  if (PyObject_CheckBuffer(obj.ptr())) return from_buffer(py::reinterpret_borrow<py::buffer>(obj), p, where);
  if (py::hasattr(obj, "__dlpack__")) return from_dlpack(obj, p, where);
  api::throw_bad_input(where, "out",
                       "the output is a " + std::string(py::str(py::type::handle_of(obj).attr("__name__"))) +
                           ", which has neither the buffer protocol nor __dlpack__",
                       "pass a NumPy array, a torch tensor or any DLPack tensor");
}

}  // namespace moe::python
